/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The reader: walks instructions through the disassembler seam.  It decides
 * how much of a prologue must move (whole instructions covering the patch)
 * and whether the rest of the function jumps back into those bytes, which
 * would land in the middle of the patch jump after hooking.
 */
#ifndef ARGUS_READER_H
#define ARGUS_READER_H

#include "disasm.h"

/* Reads whole instructions from code (running at pc, len bytes readable)
 * until min_bytes are covered.  A block end (ret, jmp, ...) before that is
 * ARGUS_ERR_TOO_SHORT: the bytes after it may be another function.
 * Returns 0 or a negative enum argus_reloc_error; *n instructions in insns. */
int argus_read_prologue(enum argus_arch arch, const uint8_t *code, size_t len, uint64_t pc,
			size_t min_bytes, struct argus_insn *insns, int max, int *n);

/* Linear sweep over a whole function [pc, pc + len): 1 when a relative
 * branch targets (pc, pc + patch_len), the bytes the patch overwrites (the
 * entry itself is fine: the patch starts there).  Stops at the first
 * undecodable byte (data in text); a linear sweep can be fooled by it, so
 * this is a safety net, not a proof. */
int argus_branches_into_patch(enum argus_arch arch, const uint8_t *code, size_t len, uint64_t pc,
			      size_t patch_len);

#endif
