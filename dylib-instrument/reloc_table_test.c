/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Runs a relocation table (arch/<arch>/reloc_<arch>.txt): each row gives input
 * bytes at a source address, the trampoline address, the minimum number of
 * bytes to move, and either the exact output bytes or the error expected.
 *
 *   name | src_pc | dst_pc | min | input hex | output hex  or  error NAME
 *
 * min "all" means every input byte.  Prints one line per failing row and a
 * closing "N passed, N failed"; exits 1 on any failure or malformed row.
 *
 *   argus-reloc-table-test x86_64|arm64 TABLE
 */
#include "reloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static int parse_hex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;
	while (*s) {
		if (isspace((unsigned char)*s)) {
			s++;
			continue;
		}
		unsigned v;
		if (n == cap || !isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]) ||
		    sscanf(s, "%2x", &v) != 1)
			return -1;
		out[n++] = (uint8_t)v;
		s += 2;
	}
	return (int)n;
}

static void print_hex(const char *label, const uint8_t *b, size_t n)
{
	printf("    %s:", label);
	for (size_t i = 0; i < n; i++)
		printf(" %02x", b[i]);
	printf("\n");
}

/* Returns 1 pass, 0 fail, -1 malformed. */
static int run_row(enum argus_arch arch, char *line, int lineno)
{
	char *field[6];
	int nf = 0;
	for (char *tok = strtok(line, "|"); tok && nf < 6; tok = strtok(NULL, "|"))
		field[nf++] = trim(tok);
	if (nf != 6 || strtok(NULL, "|"))
		return -1;
	const char *name = field[0];
	char *end;
	uint64_t src_pc = strtoull(field[1], &end, 0), dst_pc;
	if (*end)
		return -1;
	dst_pc = strtoull(field[2], &end, 0);
	if (*end)
		return -1;
	uint8_t in[64], want[128], out[256];
	int in_len = parse_hex(field[4], in, sizeof(in));
	if (in_len <= 0)
		return -1;
	size_t min = (size_t)in_len;
	if (strcmp(field[3], "all") != 0) {
		min = strtoul(field[3], &end, 0);
		if (*end)
			return -1;
	}
	int want_err = 0, want_len = 0;
	if (strncmp(field[5], "error ", 6) == 0) {
		want_err = argus_reloc_error_from_name(trim(field[5] + 6));
		if (want_err > 0)
			return -1;
	} else if ((want_len = parse_hex(field[5], want, sizeof(want))) < 0) {
		return -1;
	}

	struct argus_reloc_result res;
	int err = argus_relocate(arch, in, (size_t)in_len, src_pc, min, dst_pc, out, sizeof(out), &res);
	int ok = want_err ? err == want_err
			  : err == 0 && res.out_len == (size_t)want_len && memcmp(out, want, res.out_len) == 0;
	if (!ok) {
		printf("FAIL %s (line %d)\n", name, lineno);
		if (want_err)
			printf("    want: error %s\n", argus_reloc_error_name(want_err));
		else
			print_hex("want", want, (size_t)want_len);
		if (err)
			printf("    got:  error %s (instruction %d)\n", argus_reloc_error_name(err), res.failed_insn);
		else
			print_hex("got ", out, res.out_len);
	}
	return ok;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "x86_64") && strcmp(argv[1], "arm64"))) {
		fprintf(stderr, "usage: %s x86_64|arm64 TABLE\n", argv[0]);
		return 2;
	}
	enum argus_arch arch = strcmp(argv[1], "x86_64") == 0 ? ARGUS_ARCH_X86_64 : ARGUS_ARCH_ARM64;
	FILE *f = fopen(argv[2], "r");
	if (!f) {
		fprintf(stderr, "reloc-table-test: cannot open %s\n", argv[2]);
		return 2;
	}
	char line[1024];
	int lineno = 0, passed = 0, failed = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		char *s = trim(line);
		if (!*s || *s == '#')
			continue;
		int r = run_row(arch, s, lineno);
		if (r < 0) {
			printf("FAIL malformed row at %s:%d\n", argv[2], lineno);
			failed++;
		} else if (r) {
			passed++;
		} else {
			failed++;
		}
	}
	fclose(f);
	printf("%d passed, %d failed\n", passed, failed);
	return failed || !passed ? 1 : 0;
}
