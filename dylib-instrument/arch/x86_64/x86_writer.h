/* SPDX-License-Identifier: Apache-2.0 */
/*
 * x86_64 instruction writer: the handful of encodings the relocator and the
 * hook trampolines emit (Intel SDM vol. 2).  "abs" forms reach any address
 * through a 64-bit literal placed right after the instruction.
 */
#ifndef ARGUS_X86_WRITER_H
#define ARGUS_X86_WRITER_H

#include "../../writer.h"

#define X86_JMP_REL32_SIZE 5
#define X86_JMP_ABS_SIZE 14        /* jmp [rip+0]; .quad target */

enum x86_reg { X86_RAX, X86_RCX, X86_RDX, X86_RBX, X86_RSP, X86_RBP, X86_RSI, X86_RDI,
	       X86_R8, X86_R9, X86_R10, X86_R11, X86_R12, X86_R13, X86_R14, X86_R15 };

/* rel32 from the end of an instruction of `size` bytes written at the writer's pc */
int x86_rel32_fits(const struct argus_writer *w, unsigned size, uint64_t target);

void x86_put_jmp_rel32(struct argus_writer *w, uint64_t target);
void x86_put_jmp_abs(struct argus_writer *w, uint64_t target);
/* rel32 when it reaches, else the absolute form */
void x86_put_jmp(struct argus_writer *w, uint64_t target);
void x86_put_call_rel32(struct argus_writer *w, uint64_t target);
void x86_put_call_abs(struct argus_writer *w, uint64_t target);   /* call [rip+2]; jmp +8; .quad */
void x86_put_jcc_rel32(struct argus_writer *w, unsigned cond, uint64_t target);
void x86_put_jcc_abs(struct argus_writer *w, unsigned cond, uint64_t target); /* j!cc over jmp abs */
void x86_put_mov_reg_imm64(struct argus_writer *w, enum x86_reg reg, uint64_t imm);
void x86_put_mov_reg_reg(struct argus_writer *w, enum x86_reg dst, enum x86_reg src);
void x86_put_push(struct argus_writer *w, enum x86_reg reg);
void x86_put_pop(struct argus_writer *w, enum x86_reg reg);
void x86_put_call_reg(struct argus_writer *w, enum x86_reg reg);
void x86_put_sub_rsp_imm8(struct argus_writer *w, int8_t imm);
void x86_put_add_rsp_imm8(struct argus_writer *w, int8_t imm);
void x86_put_mov_rsp_disp8_rax(struct argus_writer *w, int8_t disp);   /* mov [rsp+disp], rax */
void x86_put_ret(struct argus_writer *w);

#endif
