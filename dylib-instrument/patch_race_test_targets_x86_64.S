/* Functions for patch_race_test.c: each returns x + 1, with the
 * prologue shapes whose patching can race a thread running them. */
	.text
	.globl race_multi, race_straddle

	.p2align 4
race_multi:                     /* aligned; the 5-byte patch covers 3 instructions */
	push %rbp
	mov %rsp, %rbp
	lea 1(%rdi), %rax
	pop %rbp
	ret

	.p2align 4
	.skip 6, 0x90
race_straddle:                  /* at 6 mod 8: the 5-byte patch spans two 8-byte words */
	push %rbp
	mov %rsp, %rbp
	lea 1(%rdi), %rax
	pop %rbp
	ret

	.section .note.GNU-stack,"",@progbits
