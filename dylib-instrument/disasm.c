/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Capstone behind the seam of disasm.h.  Capstone tells us which instruction
 * it is (and rejects what is not one); the few fields the relocators need are
 * turned into struct argus_insn here.  On arm64 the immediates are taken from
 * the fixed 32-bit encodings (ARM ARM, "A64 instruction set encoding") rather
 * than from capstone's operands, whose conventions differ between capstone
 * 4 and 5 (absolute vs relative ADRP pages).
 *
 * Handles are opened once per architecture and kept; callers serialize (the
 * hook installer holds its own lock), as a capstone handle is not thread safe.
 */
#include "disasm.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <string.h>

static csh handles[3];

static csh handle_for(enum argus_arch arch)
{
	if (handles[arch])
		return handles[arch];
	cs_arch cs = arch == ARGUS_ARCH_X86_64 ? CS_ARCH_X86 : CS_ARCH_ARM64;
	cs_mode mode = arch == ARGUS_ARCH_X86_64 ? CS_MODE_64 : CS_MODE_ARM;
	csh h;
	if (cs_open(cs, mode, &h) != CS_ERR_OK)
		return 0;
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	handles[arch] = h;
	return h;
}

/* x86 jcc instruction id -> condition code (low nibble of 0x7X / 0x0F 0x8X). */
static int x86_jcc_cond(unsigned id)
{
	switch (id) {
	case X86_INS_JO: return 0;
	case X86_INS_JNO: return 1;
	case X86_INS_JB: return 2;
	case X86_INS_JAE: return 3;
	case X86_INS_JE: return 4;
	case X86_INS_JNE: return 5;
	case X86_INS_JBE: return 6;
	case X86_INS_JA: return 7;
	case X86_INS_JS: return 8;
	case X86_INS_JNS: return 9;
	case X86_INS_JP: return 10;
	case X86_INS_JNP: return 11;
	case X86_INS_JL: return 12;
	case X86_INS_JGE: return 13;
	case X86_INS_JLE: return 14;
	case X86_INS_JG: return 15;
	default: return -1;
	}
}

static void classify_x86(const cs_insn *ci, struct argus_insn *out)
{
	const cs_x86 *x = &ci->detail->x86;
	unsigned id = ci->id;
	int cond = x86_jcc_cond(id);
	int imm_op = x->op_count >= 1 && x->operands[0].type == X86_OP_IMM;

	if (cond >= 0) {
		out->kind = INSN_JCC;
		out->cond = (uint8_t)cond;
		out->target = (uint64_t)x->operands[0].imm;
		return;
	}
	switch (id) {
	case X86_INS_JRCXZ: case X86_INS_JECXZ: case X86_INS_JCXZ:
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
		out->kind = INSN_JCXZ_LOOP;
		out->target = (uint64_t)x->operands[0].imm;
		return;
	case X86_INS_XBEGIN:
		out->kind = INSN_REFUSED;
		out->target = (uint64_t)x->operands[0].imm;
		return;
	case X86_INS_JMP:
		out->ends_block = 1;
		if (imm_op) {
			out->kind = INSN_JMP;
			out->target = (uint64_t)x->operands[0].imm;
			return;
		}
		break;  /* indirect: may still be RIP-relative below */
	case X86_INS_CALL:
		if (imm_op) {
			out->kind = INSN_CALL;
			out->target = (uint64_t)x->operands[0].imm;
			return;
		}
		break;
	case X86_INS_RET: case X86_INS_RETF: case X86_INS_UD2: case X86_INS_INT3: case X86_INS_HLT:
		out->ends_block = 1;
		return;
	default:
		break;
	}
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type != X86_OP_MEM || op->mem.base != X86_REG_RIP)
			continue;
		out->kind = INSN_PC_MEM;
		out->disp_offset = x->encoding.disp_offset;
		out->target = ci->address + ci->size + (int64_t)op->mem.disp;
		/* lea r64, [rip+disp]: REX.W set; register = REX.R:ModRM.reg */
		if (id == X86_INS_LEA && (x->rex & 0x8)) {
			out->is_lea = 1;
			out->lea_reg = (uint8_t)(((x->rex & 0x4) ? 8 : 0) | ((x->modrm >> 3) & 7));
		}
		return;
	}
}

static int64_t sign_extend(uint64_t v, int bits)
{
	uint64_t m = 1ull << (bits - 1);
	v &= (1ull << bits) - 1;
	return (int64_t)((v ^ m) - m);
}

static void classify_arm64(const cs_insn *ci, struct argus_insn *out)
{
	uint32_t w;
	memcpy(&w, ci->bytes, 4);
	uint64_t pc = ci->address;

	switch (ci->id) {
	case ARM64_INS_B:
		if ((w & 0xFF000010) == 0x54000000) {          /* B.cond imm19 */
			out->kind = INSN_JCC;
			out->target = pc + (sign_extend(w >> 5, 19) * 4);
		} else {                                       /* B imm26 */
			out->kind = INSN_JMP;
			out->ends_block = 1;
			out->target = pc + (sign_extend(w, 26) * 4);
		}
		return;
	case ARM64_INS_BL:
		out->kind = INSN_CALL;
		out->target = pc + (sign_extend(w, 26) * 4);
		return;
	case ARM64_INS_CBZ: case ARM64_INS_CBNZ:
		out->kind = INSN_CBZ;
		out->target = pc + (sign_extend(w >> 5, 19) * 4);
		return;
	case ARM64_INS_TBZ: case ARM64_INS_TBNZ:
		out->kind = INSN_TBZ;
		out->target = pc + (sign_extend(w >> 5, 14) * 4);
		return;
	case ARM64_INS_ADR: case ARM64_INS_ADRP: {
		int64_t imm = sign_extend(((w >> 5) & 0x7FFFF) << 2 | ((w >> 29) & 3), 21);
		if (ci->id == ARM64_INS_ADR) {
			out->kind = INSN_ADR;
			out->target = pc + imm;
		} else {
			out->kind = INSN_ADRP;
			out->target = (pc & ~0xFFFull) + (imm * 4096);
		}
		return;
	}
	case ARM64_INS_LDR: case ARM64_INS_LDRSW: case ARM64_INS_PRFM:
		if ((w & 0x3B000000) == 0x18000000) {          /* load register (literal) */
			out->kind = (w & (1u << 26)) ? INSN_LDR_LITERAL_FP : INSN_LDR_LITERAL;
			out->target = pc + (sign_extend(w >> 5, 19) * 4);
		}
		return;
	case ARM64_INS_LDXR: case ARM64_INS_LDAXR: case ARM64_INS_LDXP: case ARM64_INS_LDAXP:
	case ARM64_INS_LDXRB: case ARM64_INS_LDXRH: case ARM64_INS_LDAXRB: case ARM64_INS_LDAXRH:
		/* A load-exclusive whose store-exclusive may lie past the patch: the
		 * branch back and the trampoline's own accesses can clear the
		 * exclusive monitor and make the retry loop spin forever. */
		out->kind = INSN_REFUSED;
		return;
	case ARM64_INS_RET: case ARM64_INS_BR: case ARM64_INS_BRK: case ARM64_INS_HLT:
		out->ends_block = 1;
		return;
	default:
		return;
	}
}

int argus_disasm_one(enum argus_arch arch, const uint8_t *code, size_t len, uint64_t address,
		     struct argus_insn *out)
{
	csh h = handle_for(arch);
	cs_insn *ci = NULL;
	if (!h || cs_disasm(h, code, len, address, 1, &ci) != 1)
		return -1;
	memset(out, 0, sizeof(*out));
	out->address = address;
	out->size = (uint8_t)ci->size;
	memcpy(out->bytes, ci->bytes, ci->size);
	snprintf(out->mnemonic, sizeof(out->mnemonic), "%s", ci->mnemonic);
	if (arch == ARGUS_ARCH_X86_64)
		classify_x86(ci, out);
	else
		classify_arm64(ci, out);
	cs_free(ci, 1);
	return 0;
}
