/* SPDX-License-Identifier: Apache-2.0 */
#include "reader.h"
#include "reloc.h"

int argus_read_prologue(enum argus_arch arch, const uint8_t *code, size_t len, uint64_t pc,
			size_t min_bytes, struct argus_insn *insns, int max, int *n)
{
	size_t off = 0;
	*n = 0;
	while (off < min_bytes) {
		if (*n == max)
			return ARGUS_ERR_UNSUPPORTED;
		if (off >= len)
			return ARGUS_ERR_TOO_SHORT;
		struct argus_insn *in = &insns[*n];
		if (argus_disasm_one(arch, code + off, len - off, pc + off, in) != 0)
			return ARGUS_ERR_INVALID;
		(*n)++;
		off += in->size;
		if (in->ends_block && off < min_bytes)
			return ARGUS_ERR_TOO_SHORT;
	}
	return 0;
}

static int is_relative_branch(const struct argus_insn *in)
{
	switch (in->kind) {
	case INSN_JMP: case INSN_JCC: case INSN_JCXZ_LOOP: case INSN_CBZ: case INSN_TBZ:
		return 1;
	default:
		return 0;
	}
}

int argus_branches_into_patch(enum argus_arch arch, const uint8_t *code, size_t len, uint64_t pc,
			      size_t patch_len)
{
	struct argus_insn in;
	for (size_t off = 0; off < len; off += in.size) {
		if (argus_disasm_one(arch, code + off, len - off, pc + off, &in) != 0)
			return 0;
		if (is_relative_branch(&in) && in.target > pc && in.target < pc + patch_len)
			return 1;
	}
	return 0;
}
