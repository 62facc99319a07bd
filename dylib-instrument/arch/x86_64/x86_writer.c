/* SPDX-License-Identifier: Apache-2.0 */
#include "x86_writer.h"

int x86_rel32_fits(const struct argus_writer *w, unsigned size, uint64_t target)
{
	return argus_fits_signed((int64_t)(target - (argus_writer_pc(w) + size)), 32);
}

static void put_rel32(struct argus_writer *w, uint64_t target)
{
	argus_put_u32(w, (uint32_t)(target - (argus_writer_pc(w) + 4)));
}

void x86_put_jmp_rel32(struct argus_writer *w, uint64_t target)
{
	argus_put_u8(w, 0xE9);
	put_rel32(w, target);
}

void x86_put_jmp_abs(struct argus_writer *w, uint64_t target)
{
	static const uint8_t jmp_rip0[] = {0xFF, 0x25, 0, 0, 0, 0};
	argus_put_bytes(w, jmp_rip0, sizeof(jmp_rip0));
	argus_put_u64(w, target);
}

void x86_put_jmp(struct argus_writer *w, uint64_t target)
{
	if (x86_rel32_fits(w, 5, target))
		x86_put_jmp_rel32(w, target);
	else
		x86_put_jmp_abs(w, target);
}

void x86_put_call_rel32(struct argus_writer *w, uint64_t target)
{
	argus_put_u8(w, 0xE8);
	put_rel32(w, target);
}

void x86_put_call_abs(struct argus_writer *w, uint64_t target)
{
	/* call [rip+2] reads the literal after the 2-byte jmp that skips it */
	static const uint8_t seq[] = {0xFF, 0x15, 2, 0, 0, 0, 0xEB, 0x08};
	argus_put_bytes(w, seq, sizeof(seq));
	argus_put_u64(w, target);
}

void x86_put_jcc_rel32(struct argus_writer *w, unsigned cond, uint64_t target)
{
	argus_put_u8(w, 0x0F);
	argus_put_u8(w, (uint8_t)(0x80 | cond));
	put_rel32(w, target);
}

void x86_put_jcc_abs(struct argus_writer *w, unsigned cond, uint64_t target)
{
	/* the inverse condition (low bit flipped) skips the 14-byte absolute jmp */
	argus_put_u8(w, (uint8_t)(0x70 | (cond ^ 1)));
	argus_put_u8(w, X86_JMP_ABS_SIZE);
	x86_put_jmp_abs(w, target);
}

static uint8_t rex(int w, enum x86_reg r, enum x86_reg b)
{
	return (uint8_t)(0x40 | (w ? 8 : 0) | ((r & 8) ? 4 : 0) | ((b & 8) ? 1 : 0));
}

void x86_put_mov_reg_imm64(struct argus_writer *w, enum x86_reg reg, uint64_t imm)
{
	argus_put_u8(w, rex(1, 0, reg));
	argus_put_u8(w, (uint8_t)(0xB8 | (reg & 7)));
	argus_put_u64(w, imm);
}

void x86_put_mov_reg_reg(struct argus_writer *w, enum x86_reg dst, enum x86_reg src)
{
	argus_put_u8(w, rex(1, src, dst));
	argus_put_u8(w, 0x89);                              /* mov r/m64, r64 */
	argus_put_u8(w, (uint8_t)(0xC0 | ((src & 7) << 3) | (dst & 7)));
}

void x86_put_push(struct argus_writer *w, enum x86_reg reg)
{
	if (reg & 8)
		argus_put_u8(w, 0x41);
	argus_put_u8(w, (uint8_t)(0x50 | (reg & 7)));
}

void x86_put_pop(struct argus_writer *w, enum x86_reg reg)
{
	if (reg & 8)
		argus_put_u8(w, 0x41);
	argus_put_u8(w, (uint8_t)(0x58 | (reg & 7)));
}

void x86_put_call_reg(struct argus_writer *w, enum x86_reg reg)
{
	if (reg & 8)
		argus_put_u8(w, 0x41);
	argus_put_u8(w, 0xFF);
	argus_put_u8(w, (uint8_t)(0xD0 | (reg & 7)));
}

void x86_put_sub_rsp_imm8(struct argus_writer *w, int8_t imm)
{
	const uint8_t seq[] = {0x48, 0x83, 0xEC, (uint8_t)imm};
	argus_put_bytes(w, seq, sizeof(seq));
}

void x86_put_add_rsp_imm8(struct argus_writer *w, int8_t imm)
{
	const uint8_t seq[] = {0x48, 0x83, 0xC4, (uint8_t)imm};
	argus_put_bytes(w, seq, sizeof(seq));
}

void x86_put_mov_rsp_disp8_rax(struct argus_writer *w, int8_t disp)
{
	const uint8_t seq[] = {0x48, 0x89, 0x44, 0x24, (uint8_t)disp};
	argus_put_bytes(w, seq, sizeof(seq));
}

void x86_put_ret(struct argus_writer *w)
{
	argus_put_u8(w, 0xC3);
}
