/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The architecture-neutral relocation driver: read the prologue, emit each
 * instruction through the architecture's relocator twice (sizes, then final
 * bytes with internal branch targets known).  Sizes agree between the passes
 * because an instruction's form depends only on the addresses before it and
 * on external targets, never on the positions of later instructions.
 */
#include "reader.h"
#include "relocator_arch.h"

#include <string.h>

int argus_reloc_resolve(const struct argus_reloc_map *m, uint64_t target, uint64_t *where, int *internal)
{
	*internal = 0;
	*where = target;
	if (target < m->src_start || target >= m->src_end)
		return 0;
	for (int i = 0; i < m->n; i++) {
		if (m->insns[i].address == target) {
			*internal = 1;
			*where = m->final ? m->dst_pc + m->out_off[i] : m->dst_pc;
			return 0;
		}
	}
	return ARGUS_ERR_MID_INSN;
}

int argus_relocate(enum argus_arch arch, const uint8_t *src, size_t src_len, uint64_t src_pc,
		   size_t min_bytes, uint64_t dst_pc, uint8_t *out, size_t out_cap,
		   struct argus_reloc_result *res)
{
	struct argus_insn insns[ARGUS_RELOC_MAX_INSNS];
	size_t out_off[ARGUS_RELOC_MAX_INSNS];
	int n = 0;

	memset(res, 0, sizeof(*res));
	res->failed_insn = -1;
	int err = argus_read_prologue(arch, src, src_len, src_pc, min_bytes, insns, ARGUS_RELOC_MAX_INSNS, &n);
	if (err) {
		res->failed_insn = n ? n - 1 : 0;
		return err;
	}
	const struct argus_insn *last = &insns[n - 1];
	struct argus_reloc_map m = {
		.src_start = src_pc, .src_end = last->address + last->size,
		.insns = insns, .n = n, .out_off = out_off, .dst_pc = dst_pc,
	};
	for (m.final = 0; m.final <= 1; m.final++) {
		struct argus_writer w;
		argus_writer_init(&w, out, out_cap, dst_pc);
		for (int i = 0; i < n; i++) {
			if (!m.final)
				out_off[i] = w.len;
			err = arch == ARGUS_ARCH_X86_64 ? argus_x86_64_relocate_insn(&insns[i], &m, &w)
							: argus_arm64_relocate_insn(&insns[i], &m, &w);
			if (err) {
				res->failed_insn = i;
				return err;
			}
		}
		if (w.overflow)
			return ARGUS_ERR_NO_SPACE;
		res->out_len = w.len;
	}
	res->consumed = m.src_end - src_pc;
	res->ninsn = n;
	res->ended = last->ends_block;
	return 0;
}

static const struct { int err; const char *name, *text; } errors[] = {
	{ARGUS_RELOC_OK, "OK", "relocated"},
	{ARGUS_ERR_INVALID, "INVALID", "bytes do not decode as an instruction"},
	{ARGUS_ERR_TOO_SHORT, "TOO_SHORT", "function too short to patch"},
	{ARGUS_ERR_UNSUPPORTED, "UNSUPPORTED", "instruction refused by the relocator"},
	{ARGUS_ERR_OUT_OF_RANGE, "OUT_OF_RANGE", "PC-relative operand out of range from the trampoline"},
	{ARGUS_ERR_MID_INSN, "MID_INSN", "branch into the middle of a relocated instruction"},
	{ARGUS_ERR_BRANCH_INTO, "BRANCH_INTO", "the function branches back into the patched bytes"},
	{ARGUS_ERR_NO_SPACE, "NO_SPACE", "trampoline buffer too small"},
};

const char *argus_reloc_strerror(int err)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].err == err)
			return errors[i].text;
	return "unknown relocation error";
}

const char *argus_reloc_error_name(int err)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].err == err)
			return errors[i].name;
	return "?";
}

int argus_reloc_error_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (strcmp(errors[i].name, name) == 0)
			return errors[i].err;
	return 1;
}
