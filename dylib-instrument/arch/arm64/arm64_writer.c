/* SPDX-License-Identifier: Apache-2.0 */
#include "arm64_writer.h"

static int64_t words_to(const struct argus_writer *w, uint64_t target)
{
	return (int64_t)(target - argus_writer_pc(w)) / 4;
}

int a64_branch_fits(const struct argus_writer *w, uint64_t target, int bits)
{
	return ((target - argus_writer_pc(w)) & 3) == 0 && argus_fits_signed(words_to(w, target), bits);
}

void a64_put_insn(struct argus_writer *w, uint32_t insn)
{
	argus_put_u32(w, insn);
}

void a64_put_b(struct argus_writer *w, uint64_t target)
{
	a64_put_insn(w, 0x14000000u | ((uint32_t)words_to(w, target) & 0x3FFFFFFu));
}

void a64_put_bl(struct argus_writer *w, uint64_t target)
{
	a64_put_insn(w, 0x94000000u | ((uint32_t)words_to(w, target) & 0x3FFFFFFu));
}

static void put_ldr_literal_x(struct argus_writer *w, unsigned rt, unsigned words)
{
	a64_put_insn(w, 0x58000000u | (words << 5) | rt);
}

void a64_put_jmp_abs(struct argus_writer *w, uint64_t target)
{
	put_ldr_literal_x(w, A64_X16, 2);
	a64_put_insn(w, 0xD61F0000u | (A64_X16 << 5));        /* br x16 */
	argus_put_u64(w, target);
}

void a64_put_call_abs(struct argus_writer *w, uint64_t target)
{
	put_ldr_literal_x(w, A64_X16, 3);
	a64_put_insn(w, 0xD63F0000u | (A64_X16 << 5));        /* blr x16: lr = the b below */
	a64_put_insn(w, 0x14000003u);                         /* b over the literal */
	argus_put_u64(w, target);
}

void a64_put_with_imm19(struct argus_writer *w, uint32_t insn, uint64_t target)
{
	a64_put_insn(w, (insn & 0xFF00001Fu) | (((uint32_t)words_to(w, target) & 0x7FFFFu) << 5));
}

void a64_put_with_imm14(struct argus_writer *w, uint32_t insn, uint64_t target)
{
	a64_put_insn(w, (insn & 0xFFF8001Fu) | (((uint32_t)words_to(w, target) & 0x3FFFu) << 5));
}

static uint32_t adr_imm(int64_t imm21)
{
	uint32_t v = (uint32_t)imm21 & 0x1FFFFFu;
	return ((v & 3u) << 29) | ((v >> 2) << 5);
}

void a64_put_adr(struct argus_writer *w, unsigned rd, uint64_t target)
{
	a64_put_insn(w, 0x10000000u | adr_imm((int64_t)(target - argus_writer_pc(w))) | rd);
}

int a64_adrp_fits(const struct argus_writer *w, uint64_t target)
{
	int64_t pages = (int64_t)((target >> 12) - (argus_writer_pc(w) >> 12));
	return argus_fits_signed(pages, 21);
}

void a64_put_adrp(struct argus_writer *w, unsigned rd, uint64_t target)
{
	int64_t pages = (int64_t)((target >> 12) - (argus_writer_pc(w) >> 12));
	a64_put_insn(w, 0x90000000u | adr_imm(pages) | rd);
}

void a64_put_add_imm12(struct argus_writer *w, unsigned rd, unsigned rn, unsigned imm12)
{
	a64_put_insn(w, 0x91000000u | ((imm12 & 0xFFFu) << 10) | (rn << 5) | rd);
}

void a64_put_load_u64(struct argus_writer *w, unsigned rd, uint64_t value)
{
	put_ldr_literal_x(w, rd, 2);
	a64_put_insn(w, 0x14000003u);
	argus_put_u64(w, value);
}

void a64_put_stp_sp(struct argus_writer *w, unsigned a, unsigned b, unsigned off)
{
	a64_put_insn(w, 0xA9000000u | ((off / 8) << 15) | (b << 10) | (A64_SP << 5) | a);
}

void a64_put_ldp_sp(struct argus_writer *w, unsigned a, unsigned b, unsigned off)
{
	a64_put_insn(w, 0xA9400000u | ((off / 8) << 15) | (b << 10) | (A64_SP << 5) | a);
}

void a64_put_str_sp(struct argus_writer *w, unsigned t, unsigned off)
{
	a64_put_insn(w, 0xF9000000u | ((off / 8) << 10) | (A64_SP << 5) | t);
}

void a64_put_ldr_sp(struct argus_writer *w, unsigned t, unsigned off)
{
	a64_put_insn(w, 0xF9400000u | ((off / 8) << 10) | (A64_SP << 5) | t);
}

void a64_put_sub_sp(struct argus_writer *w, unsigned imm12)
{
	a64_put_insn(w, 0xD1000000u | (imm12 << 10) | (A64_SP << 5) | A64_SP);
}

void a64_put_add_sp(struct argus_writer *w, unsigned imm12)
{
	a64_put_insn(w, 0x91000000u | (imm12 << 10) | (A64_SP << 5) | A64_SP);
}

void a64_put_mov_from_sp(struct argus_writer *w, unsigned rd)
{
	a64_put_insn(w, 0x91000000u | (A64_SP << 5) | rd);           /* add xd, sp, #0 */
}

void a64_put_mov(struct argus_writer *w, unsigned rd, unsigned rm)
{
	a64_put_insn(w, 0xAA0003E0u | (rm << 16) | rd);              /* orr xd, xzr, xm */
}

void a64_put_ldr_literal_at(struct argus_writer *w, unsigned rt, uint64_t literal)
{
	a64_put_with_imm19(w, 0x58000000u | rt, literal);
}

void a64_put_blr(struct argus_writer *w, unsigned rn)
{
	a64_put_insn(w, 0xD63F0000u | (rn << 5));
}

void a64_put_ret(struct argus_writer *w)
{
	a64_put_insn(w, 0xD65F03C0u);
}
