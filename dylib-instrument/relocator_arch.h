/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the common relocation driver (relocator.c) hands each architecture's
 * emitter (arch/<arch>/<arch>_relocator.c): the relocated region and where
 * each of its instructions lands, so branches inside it can be retargeted.
 *
 * The driver runs the emitter twice.  In the first pass (final == 0) the
 * landing offsets of later instructions are not known yet; an emitter must
 * therefore pick the encoding of an internal branch independent of its
 * distance (it always reaches: the region is a few dozen bytes).
 */
#ifndef ARGUS_RELOCATOR_ARCH_H
#define ARGUS_RELOCATOR_ARCH_H

#include "disasm.h"
#include "reloc.h"
#include "writer.h"

struct argus_reloc_map {
	uint64_t src_start, src_end;        /* the relocated source bytes */
	const struct argus_insn *insns;
	int n;
	const size_t *out_off;              /* where insns[i] starts in the output */
	uint64_t dst_pc;
	int final;
};

/* The address a branch to target must use from the relocated code: its
 * relocated copy when inside the region (*internal = 1), else target.
 * ARGUS_ERR_MID_INSN when it falls inside an instruction. */
int argus_reloc_resolve(const struct argus_reloc_map *m, uint64_t target, uint64_t *where, int *internal);

int argus_x86_64_relocate_insn(const struct argus_insn *in, const struct argus_reloc_map *m,
			       struct argus_writer *w);
int argus_arm64_relocate_insn(const struct argus_insn *in, const struct argus_reloc_map *m,
			      struct argus_writer *w);

#endif
