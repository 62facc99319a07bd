/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arm64 relocation of one instruction (see reloc.h for the contract).  Each
 * PC-relative form keeps its own encoding with a new immediate when it still
 * reaches from the trampoline, else takes a far form:
 *   B / BL            +-128 MiB   ldr x16 literal + br/blr x16
 *   B.cond, CBZ/CBNZ  +-1 MiB     inverse condition over the far B
 *   TBZ/TBNZ          +-32 KiB    inverse test over the far B
 *   ADR               +-1 MiB     ADRP+ADD (+-4 GiB), else a 64-bit literal
 *   ADRP              +-4 GiB     a 64-bit literal
 *   LDR/LDRSW literal +-1 MiB     the address as a literal, then ldr [xt]
 *   LDR s/d/q literal +-1 MiB     the address into x17, then ldr [x17]
 *   PRFM literal      +-1 MiB     a NOP (a prefetch hint may be dropped)
 * Load-exclusives are refused (disasm.c says why).
 */
#include "../../relocator_arch.h"
#include "arm64_writer.h"

/* Far conditional: the inverted branch skips a 16-byte absolute jump
 * (5 words ahead).  B.cond inverts cond bit 0, CBZ/TBZ invert op bit 24;
 * AL/NV have no inverse. */
static int put_far_conditional(struct argus_writer *w, const struct argus_insn *in, uint64_t where)
{
	uint32_t insn;
	memcpy(&insn, in->bytes, 4);
	if (in->kind == INSN_JCC) {
		if ((insn & 0xE) == 0xE)
			return ARGUS_ERR_UNSUPPORTED;
		a64_put_insn(w, ((insn ^ 1u) & 0xFF00001Fu) | (5u << 5));
	} else if (in->kind == INSN_CBZ) {
		a64_put_insn(w, ((insn ^ (1u << 24)) & 0xFF00001Fu) | (5u << 5));
	} else {
		a64_put_insn(w, ((insn ^ (1u << 24)) & 0xFFF8001Fu) | (5u << 5));
	}
	a64_put_jmp_abs(w, where);
	return 0;
}

static int relocate_literal_load(struct argus_writer *w, const struct argus_insn *in, uint32_t insn)
{
	unsigned rt = insn & 31, opc = insn >> 30;
	if (a64_branch_fits(w, in->target, 19)) {
		a64_put_with_imm19(w, insn, in->target);
		return 0;
	}
	if (in->kind == INSN_LDR_LITERAL) {
		static const uint32_t load_via_rt[] = {
			0xB9400000u,   /* ldr wt, [xt] */
			0xF9400000u,   /* ldr xt, [xt] */
			0xB9800000u,   /* ldrsw xt, [xt] */
		};
		if (opc == 3) {
			a64_put_insn(w, A64_NOP);
			return 0;
		}
		a64_put_load_u64(w, rt, in->target);
		a64_put_insn(w, load_via_rt[opc] | (rt << 5) | rt);
		return 0;
	}
	static const uint32_t load_fp_via_x17[] = {
		0xBD400000u,   /* ldr st, [x17] */
		0xFD400000u,   /* ldr dt, [x17] */
		0x3DC00000u,   /* ldr qt, [x17] */
	};
	if (opc == 3)
		return ARGUS_ERR_INVALID;
	a64_put_load_u64(w, A64_X17, in->target);
	a64_put_insn(w, load_fp_via_x17[opc] | (A64_X17 << 5) | rt);
	return 0;
}

int argus_arm64_relocate_insn(const struct argus_insn *in, const struct argus_reloc_map *m,
			      struct argus_writer *w)
{
	uint32_t insn;
	uint64_t where = 0;
	int internal = 0, err;
	memcpy(&insn, in->bytes, 4);
	unsigned rd = insn & 31;

	switch (in->kind) {
	case INSN_PLAIN:
		a64_put_insn(w, insn);
		return 0;
	case INSN_REFUSED:
		return ARGUS_ERR_UNSUPPORTED;
	case INSN_ADR:
		if (argus_fits_signed((int64_t)(in->target - argus_writer_pc(w)), 21)) {
			a64_put_adr(w, rd, in->target);
		} else if (a64_adrp_fits(w, in->target)) {
			a64_put_adrp(w, rd, in->target);
			a64_put_add_imm12(w, rd, rd, (unsigned)(in->target & 0xFFF));
		} else {
			a64_put_load_u64(w, rd, in->target);
		}
		return 0;
	case INSN_ADRP:
		if (a64_adrp_fits(w, in->target))
			a64_put_adrp(w, rd, in->target);
		else
			a64_put_load_u64(w, rd, in->target);
		return 0;
	case INSN_LDR_LITERAL: case INSN_LDR_LITERAL_FP:
		return relocate_literal_load(w, in, insn);
	default:
		break;
	}
	if ((err = argus_reloc_resolve(m, in->target, &where, &internal)))
		return err;
	switch (in->kind) {
	case INSN_JMP:
		if (internal || a64_branch_fits(w, where, 26))
			a64_put_b(w, where);
		else
			a64_put_jmp_abs(w, where);
		return 0;
	case INSN_CALL:
		if (internal || a64_branch_fits(w, where, 26))
			a64_put_bl(w, where);
		else
			a64_put_call_abs(w, where);
		return 0;
	case INSN_JCC: case INSN_CBZ:
		if (internal || a64_branch_fits(w, where, 19)) {
			a64_put_with_imm19(w, insn, where);
			return 0;
		}
		return put_far_conditional(w, in, where);
	case INSN_TBZ:
		if (internal || a64_branch_fits(w, where, 14)) {
			a64_put_with_imm14(w, insn, where);
			return 0;
		}
		return put_far_conditional(w, in, where);
	default:
		return ARGUS_ERR_UNSUPPORTED;
	}
}
