/* SPDX-License-Identifier: Apache-2.0 */
/*
 * x86_64 relocation of one instruction (see reloc.h for the contract).
 *   RIP-relative operand   displacement recomputed; lea r64,[rip+d] that no
 *                          longer reaches becomes mov r64, imm64 (same value);
 *                          any other out of range is refused.
 *   jmp/call rel8/rel32    rel32 when it reaches, else through a 64-bit literal.
 *   jcc rel8/rel32         jcc rel32, else the inverse jcc over an absolute jmp.
 *   jrcxz/jecxz/loop*      rel8 only (no rel32 form exists): kept when the
 *                          target is inside the relocated bytes, refused else.
 *   xbegin                 refused (its abort address is a relative target
 *                          the transaction machinery uses later).
 */
#include "../../relocator_arch.h"
#include "x86_writer.h"

static int relocate_pc_mem(const struct argus_insn *in, struct argus_writer *w)
{
	int64_t disp = (int64_t)(in->target - (argus_writer_pc(w) + in->size));
	if (argus_fits_signed(disp, 32)) {
		uint8_t b[16];
		int32_t d32 = (int32_t)disp;
		memcpy(b, in->bytes, in->size);
		memcpy(b + in->disp_offset, &d32, 4);
		argus_put_bytes(w, b, in->size);
		return 0;
	}
	if (in->is_lea) {
		x86_put_mov_reg_imm64(w, (enum x86_reg)in->lea_reg, in->target);
		return 0;
	}
	return ARGUS_ERR_OUT_OF_RANGE;
}

static int relocate_jcxz_loop(const struct argus_insn *in, uint64_t where, int internal,
			      struct argus_writer *w)
{
	if (!internal)
		return ARGUS_ERR_UNSUPPORTED;
	/* same prefixes and opcode, rel8 re-aimed at the relocated target; an
	 * internal target is a few bytes away, so rel8 always reaches */
	int64_t rel = (int64_t)(where - (argus_writer_pc(w) + in->size));
	if (!argus_fits_signed(rel, 8))
		return ARGUS_ERR_OUT_OF_RANGE;
	argus_put_bytes(w, in->bytes, in->size - 1u);
	argus_put_u8(w, (uint8_t)(int8_t)rel);
	return 0;
}

int argus_x86_64_relocate_insn(const struct argus_insn *in, const struct argus_reloc_map *m,
			       struct argus_writer *w)
{
	uint64_t where = 0;
	int internal = 0, err;

	switch (in->kind) {
	case INSN_PLAIN:
		argus_put_bytes(w, in->bytes, in->size);
		return 0;
	case INSN_PC_MEM:
		return relocate_pc_mem(in, w);
	case INSN_REFUSED:
		return ARGUS_ERR_UNSUPPORTED;
	default:
		break;
	}
	if ((err = argus_reloc_resolve(m, in->target, &where, &internal)))
		return err;
	switch (in->kind) {
	case INSN_JMP:
		if (internal || x86_rel32_fits(w, 5, where))
			x86_put_jmp_rel32(w, where);
		else
			x86_put_jmp_abs(w, where);
		return 0;
	case INSN_CALL:
		if (internal || x86_rel32_fits(w, 5, where))
			x86_put_call_rel32(w, where);
		else
			x86_put_call_abs(w, where);
		return 0;
	case INSN_JCC:
		if (internal || x86_rel32_fits(w, 6, where))
			x86_put_jcc_rel32(w, in->cond, where);
		else
			x86_put_jcc_abs(w, in->cond, where);
		return 0;
	case INSN_JCXZ_LOOP:
		return relocate_jcxz_loop(in, where, internal, w);
	default:
		return ARGUS_ERR_UNSUPPORTED;
	}
}
