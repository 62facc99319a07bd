/* SPDX-License-Identifier: Apache-2.0 */
/*
 * arm64 thunks as data (they cannot run on this host): builds the enter and
 * return thunks of a hook with a return type for a function at 0x100000
 * into a buffer that would run at 0x104000, with fixed handler addresses,
 * and compares every byte with arch/arm64/thunk_arm64.txt (assembled by
 * llvm-mc).  Then the same hook 1 GiB away: the jump back takes the far
 * form.  Prints "N passed, N failed".
 *
 *   argus-thunk-arm64-test arch/arm64/thunk_arm64.txt
 */
#include "arm64_thunk.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_expected(const char *path, uint8_t *out, size_t cap)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[256];
	size_t n = 0;
	while (fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		for (char *p = line; *p;) {
			unsigned v;
			if (isspace((unsigned char)*p)) {
				p++;
				continue;
			}
			if (n == cap || sscanf(p, "%2x", &v) != 1) {
				fclose(f);
				return -1;
			}
			out[n++] = (uint8_t)v;
			p += 2;
		}
	}
	fclose(f);
	return (int)n;
}

static int passed, failed;

static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok" : "FAIL", what);
	ok ? passed++ : failed++;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s arch/arm64/thunk_arm64.txt\n", argv[0]);
		return 2;
	}
	uint8_t want[1024], got[1024];
	int nwant = read_expected(argv[1], want, sizeof(want));
	if (nwant <= 0) {
		fprintf(stderr, "thunk-arm64-test: cannot read %s\n", argv[1]);
		return 2;
	}
	/* stp x29, x30, [sp, #-16]!; mov x29, sp; ret */
	static const uint8_t code[] = {0xfd, 0x7b, 0xbf, 0xa9, 0xfd, 0x03, 0x00, 0x91, 0xc0, 0x03, 0x5f, 0xd6};
	const struct argus_thunk_calls calls = {0x1111222233334444ull, 0x5555666677778888ull, 0x9999AAAABBBBCCCCull};

	struct argus_hook h = {.target = (uint8_t *)0x100000, .patch_len = 4,
			       .spec = {.probe_id = 1, .enter_type = 48, .return_type = 49}};
	struct argus_reloc_result res;
	int err = argus_arm64_build_thunks(&h, got, 0x104000, sizeof(got), code, sizeof(code), &calls, &res);
	size_t len = (size_t)(h.return_thunk - got) + 4 * 16;   /* return thunk: 16 instructions */
	int same = !err && len == (size_t)nwant && memcmp(got, want, len) == 0;
	if (!same && !err)
		for (size_t i = 0; i < len && i < (size_t)nwant; i += 4)
			if (memcmp(got + i, want + i, 4))
				printf("  first difference at byte %zu\n", i), i = len;
	check(same, "near hook: pool, enter thunk, relocated stp, b back, return thunk match llvm-mc");
	check(h.enter_thunk == got + 32 && res.consumed == 4, "enter thunk after the pool; one instruction moved");

	/* 1 GiB away: the jump back no longer fits a b (+-128 MiB) */
	struct argus_hook far = h;
	far.spec.return_type = 0;
	far.return_thunk = NULL;
	err = argus_arm64_build_thunks(&far, got, 0x40100000, sizeof(got), code, sizeof(code), &calls, &res);
	const uint8_t *back = far.enter_thunk + (4 * 26) + 4;   /* after the restored frame and the moved stp */
	uint64_t lit;
	memcpy(&lit, back + 8, 8);
	uint32_t ldr, br;
	memcpy(&ldr, back, 4);
	memcpy(&br, back + 4, 4);
	check(!err && ldr == 0x58000050u && br == 0xD61F0200u && lit == 0x100004 && !far.return_thunk,
	      "far hook: ldr x16, #8; br x16; .quad 0x100004 back, no return thunk");

	/* a prologue the relocator refuses leaves no thunk */
	static const uint8_t ldxr[] = {0x20, 0x7c, 0x5f, 0xc8, 0x1f, 0x20, 0x03, 0xd5};
	err = argus_arm64_build_thunks(&far, got, 0x104000, sizeof(got), ldxr, sizeof(ldxr), &calls, &res);
	check(err == ARGUS_ERR_UNSUPPORTED, "ldxr prologue refused");

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
