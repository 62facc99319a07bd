/* The function every bench configuration calls: a frame prologue (what a
 * trampoline relocates) around x + 1.  Exported so libbpf finds it by name
 * for the uprobe configuration. */
	.text
	.globl bench_target
	.type bench_target, @function
	.p2align 4
bench_target:
	push %rbp
	mov %rsp, %rbp
	lea 1(%rdi), %rax
	pop %rbp
	ret
	.size bench_target, .-bench_target
	.section .note.GNU-stack,"",@progbits
