/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relocator: copies whole instructions from a function's prologue to a
 * trampoline at another address so they run there with the same effect.
 * Position-dependent instructions (RIP/PC-relative operands, relative
 * branches) are re-encoded for the new address, widened when the old form no
 * longer reaches, or refused with an error; nothing is ever guessed.
 *
 * Branches whose target lies inside the relocated bytes are pointed at the
 * relocated copy of that instruction (a loop or a short forward branch in the
 * prologue); a target in the middle of a relocated instruction is refused.
 *
 * The relocator never writes the jump back to the rest of the function: the
 * hook engine appends it (res.ended says none is needed).
 */
#ifndef ARGUS_RELOC_H
#define ARGUS_RELOC_H

#include "disasm.h"

enum argus_reloc_error {
	ARGUS_RELOC_OK = 0,
	ARGUS_ERR_INVALID = -1,      /* the bytes do not decode */
	ARGUS_ERR_TOO_SHORT = -2,    /* the function ends before the patch size */
	ARGUS_ERR_UNSUPPORTED = -3,  /* decodes, but is refused (xbegin, jrcxz/loop out, ldxr) */
	ARGUS_ERR_OUT_OF_RANGE = -4, /* a PC-relative operand cannot reach from the new place */
	ARGUS_ERR_MID_INSN = -5,     /* a branch targets the middle of a relocated instruction */
	ARGUS_ERR_BRANCH_INTO = -6,  /* code of the function branches back into the patch */
	ARGUS_ERR_NO_SPACE = -7,     /* the output buffer is too small */
};

#define ARGUS_RELOC_MAX_INSNS 16

struct argus_reloc_result {
	size_t consumed;   /* source bytes relocated (whole instructions) */
	size_t out_len;    /* bytes written to out */
	int ninsn;
	int ended;         /* the last instruction ends the block: no jump back */
	int failed_insn;   /* on error: index of the instruction refused, else -1 */
};

/* Relocates whole instructions from src (running at src_pc, src_len bytes
 * readable) until at least min_bytes are covered, for execution at dst_pc.
 * Returns ARGUS_RELOC_OK or a negative enum argus_reloc_error. */
int argus_relocate(enum argus_arch arch, const uint8_t *src, size_t src_len, uint64_t src_pc,
		   size_t min_bytes, uint64_t dst_pc, uint8_t *out, size_t out_cap,
		   struct argus_reloc_result *res);

const char *argus_reloc_strerror(int err);
/* "TOO_SHORT" -> ARGUS_ERR_TOO_SHORT; 1 when unknown (the test tables use these names) */
int argus_reloc_error_from_name(const char *name);
const char *argus_reloc_error_name(int err);

#endif
