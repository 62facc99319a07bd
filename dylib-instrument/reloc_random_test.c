/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The relocator on random bytes (seeded, reproducible): whatever the input,
 * argus_relocate returns an error or output and never crashes, and every
 * success is well formed: whole instructions consumed, at least the minimum,
 * output within the buffer, and the output decodes as whole instructions
 * (through the same seam) with nothing left over.  Half the inputs start
 * with a common prologue instruction followed by random bytes, so the
 * position-dependent paths run, not only "invalid".
 *
 *   argus-reloc-random-test [iterations] [seed]
 * Prints counts per outcome and "N passed, N failed" (one check per arch).
 */
#include "disasm.h"
#include "reloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;   /* xorshift64: reproducible from the seed */
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const uint8_t x86_seeds[][8] = {
	{0x48, 0x8b, 0x05}, {0x74}, {0xeb}, {0xe8}, {0x0f, 0x84}, {0xe3}, {0x48, 0x8d, 0x0d}, {0xff, 0x25},
};
static const uint8_t a64_seeds[][4] = {
	{0, 0, 0, 0x14}, {0, 0, 0, 0x94}, {0, 0, 0, 0x54}, {0, 0, 0, 0xb4}, {0, 0, 0, 0x36},
	{0, 0, 0, 0x10}, {0, 0, 0, 0x90}, {0, 0, 0, 0x58}, {0, 0, 0, 0x9c},
};

/* The output must decode into whole instructions; literal pools after an
 * absolute jump are data, so decoding stops at the first block end. */
static int decodes_whole(enum argus_arch arch, const uint8_t *out, size_t len, uint64_t pc)
{
	size_t off = 0;
	while (off < len) {
		struct argus_insn in;
		if (argus_disasm_one(arch, out + off, len - off, pc + off, &in))
			return 0;
		off += in.size;
		if (in.ends_block || in.kind == INSN_JMP)
			return 1;
		if (arch == ARGUS_ARCH_ARM64 && in.kind == INSN_LDR_LITERAL)
			return 1;   /* ldr xN, #8; b; .quad: the literal follows */
		if (arch == ARGUS_ARCH_X86_64 && in.kind == INSN_CALL && in.size == 6)
			return 1;   /* call [rip+2]; jmp +8; .quad */
	}
	return off == len;
}

int main(int argc, char **argv)
{
	long iterations = argc > 1 ? atol(argv[1]) : 100000;
	if (argc > 2)
		rng = strtoull(argv[2], NULL, 0) | 1;
	int passed = 0, failed = 0;
	for (int a = 0; a < 2; a++) {
		enum argus_arch arch = a ? ARGUS_ARCH_ARM64 : ARGUS_ARCH_X86_64;
		long outcome[8] = {0}, bad = 0;
		for (long i = 0; i < iterations; i++) {
			uint8_t in[32], out[512];
			for (size_t k = 0; k < sizeof(in); k += 8) {
				uint64_t v = next();
				memcpy(in + k, &v, 8);
			}
			if (i & 1) {
				if (arch == ARGUS_ARCH_X86_64)
					memcpy(in, x86_seeds[next() % 8], 3);
				else
					in[3] = a64_seeds[next() % 9][3] | (in[3] & 0x01);
			}
			uint64_t src = 0x400000 + (next() & 0xFFFFF0);
			uint64_t dst = (i & 2) ? 0x7f0000000000ull : src + 0x100000;
			size_t min = arch == ARGUS_ARCH_X86_64 ? (i & 4 ? 14 : 5) : (i & 4 ? 16 : 4);
			struct argus_reloc_result res;
			int err = argus_relocate(arch, in, sizeof(in), src, min, dst, out, sizeof(out), &res);
			outcome[-err < 8 ? -err : 7]++;
			if (err)
				continue;
			if (res.consumed < min || res.consumed > sizeof(in) || res.out_len > sizeof(out) ||
			    !decodes_whole(arch, out, res.out_len, dst)) {
				if (bad++ < 5) {
					printf("  bad output, input:");
					for (size_t k = 0; k < res.consumed; k++)
						printf(" %02x", in[k]);
					printf(" @%#llx -> %#llx\n", (unsigned long long)src, (unsigned long long)dst);
				}
			}
		}
		printf("%s %s: %ld inputs: ok %ld, invalid %ld, too_short %ld, unsupported %ld, out_of_range %ld, "
		       "mid_insn %ld; malformed output %ld\n", bad ? "FAIL" : "ok",
		       arch == ARGUS_ARCH_X86_64 ? "x86_64" : "arm64", iterations, outcome[0], outcome[1],
		       outcome[2], outcome[3], outcome[4], outcome[5], bad);
		bad || !outcome[0] ? failed++ : passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
