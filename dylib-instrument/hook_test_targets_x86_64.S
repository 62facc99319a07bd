/* Functions with hand-picked prologues for hook_test.c (AT&T syntax).
 * Each NAME_end label bounds the function, as a symbol size would. */
	.text
	.globl fn_plain, fn_rip, fn_branch, fn_tiny, fn_jrcxz, fn_loop_back, fn_call, fn_double
	.globl fn_plain_end, fn_loop_back_end, fn_rip_end

	.p2align 4
fn_plain:                       /* x + 1, classic frame */
	push %rbp
	mov %rsp, %rbp
	lea 1(%rdi), %rax
	pop %rbp
	ret
fn_plain_end:

	.p2align 4
fn_rip:                         /* x + rip_value: RIP-relative first instruction */
	mov rip_value(%rip), %rax
	add %rdi, %rax
	ret
fn_rip_end:

	.p2align 4
fn_branch:                      /* x == 0 ? 42 : 2x: a short jcc in the prologue */
	test %rdi, %rdi
	je 1f
	lea (%rdi,%rdi), %rax
	ret
1:	mov $42, %eax
	ret

	.p2align 4
fn_tiny:                        /* too short to patch */
	xor %eax, %eax
	ret

	.p2align 4
fn_jrcxz:                       /* (a, b, c, d) -> d ? a : 7; jrcxz out of the prologue: refused */
	jrcxz 1f
	mov %rdi, %rax
	nop
	nop
	ret
1:	mov $7, %eax
	ret

	.p2align 4
fn_loop_back:                   /* the body jumps back to offset 2, inside the patch */
	xor %eax, %eax
2:	add %rdi, %rax
	dec %rdi
	jg 2b
	ret
fn_loop_back_end:

	.p2align 4
fn_call:                        /* fn_plain(x) + 1: a call in the prologue */
	call fn_plain
	add $1, %rax
	ret

	.p2align 4
fn_double:                      /* 2.0 * x (double): xmm0 in and out */
	movapd %xmm0, %xmm1
	addsd %xmm1, %xmm0
	ret

	.data
	.p2align 3
rip_value:
	.quad 1000

	.section .note.GNU-stack,"",@progbits
