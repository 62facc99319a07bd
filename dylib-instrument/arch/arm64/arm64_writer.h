/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arm64 instruction writer: the A64 encodings the relocator emits (ARM ARM,
 * "A64 instruction set encoding").  Far forms go through x16/x17 (IP0/IP1),
 * the registers the AAPCS64 leaves to veneers between a call and its callee,
 * so clobbering them at a function's entry is what a linker veneer does too.
 */
#ifndef ARGUS_ARM64_WRITER_H
#define ARGUS_ARM64_WRITER_H

#include "../../writer.h"

#define A64_X16 16
#define A64_X17 17
#define A64_NOP 0xD503201Fu
#define A64_JMP_ABS_SIZE 16          /* ldr x16, #8; br x16; .quad target */

/* Does a branch at the writer's pc with an imm of `bits` (in words) reach target? */
int a64_branch_fits(const struct argus_writer *w, uint64_t target, int bits);

void a64_put_insn(struct argus_writer *w, uint32_t insn);
void a64_put_b(struct argus_writer *w, uint64_t target);
void a64_put_bl(struct argus_writer *w, uint64_t target);
void a64_put_jmp_abs(struct argus_writer *w, uint64_t target);
void a64_put_call_abs(struct argus_writer *w, uint64_t target);   /* ldr x16,#12; blr x16; b #12; .quad */
/* rewrites the imm19 (b.cond, cbz, ldr literal) or imm14 (tbz) field of insn for target */
void a64_put_with_imm19(struct argus_writer *w, uint32_t insn, uint64_t target);
void a64_put_with_imm14(struct argus_writer *w, uint32_t insn, uint64_t target);
void a64_put_adr(struct argus_writer *w, unsigned rd, uint64_t target);
void a64_put_adrp(struct argus_writer *w, unsigned rd, uint64_t target);
void a64_put_add_imm12(struct argus_writer *w, unsigned rd, unsigned rn, unsigned imm12);
/* ldr xd, #8; b #12; .quad value: any 64-bit value into xd */
void a64_put_load_u64(struct argus_writer *w, unsigned rd, uint64_t value);
int a64_adrp_fits(const struct argus_writer *w, uint64_t target);

#define A64_SP 31
#define A64_LR 30
/* stp/ldp xa, xb, [sp, #off] and str/ldr xt, [sp, #off] (off a multiple of 8) */
void a64_put_stp_sp(struct argus_writer *w, unsigned a, unsigned b, unsigned off);
void a64_put_ldp_sp(struct argus_writer *w, unsigned a, unsigned b, unsigned off);
void a64_put_str_sp(struct argus_writer *w, unsigned t, unsigned off);
void a64_put_ldr_sp(struct argus_writer *w, unsigned t, unsigned off);
void a64_put_sub_sp(struct argus_writer *w, unsigned imm12);
void a64_put_add_sp(struct argus_writer *w, unsigned imm12);
void a64_put_mov_from_sp(struct argus_writer *w, unsigned rd);      /* mov xd, sp */
void a64_put_mov(struct argus_writer *w, unsigned rd, unsigned rm);  /* mov xd, xm */
/* ldr xt, <literal at an absolute address> (within +-1 MiB) */
void a64_put_ldr_literal_at(struct argus_writer *w, unsigned rt, uint64_t literal);
void a64_put_blr(struct argus_writer *w, unsigned rn);
void a64_put_ret(struct argus_writer *w);

#endif
