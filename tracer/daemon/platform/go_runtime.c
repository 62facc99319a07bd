// SPDX-License-Identifier: Apache-2.0
/*
 * Go executables and their scheduler functions (go_runtime.h), read with
 * libelf: the section headers (.go.buildinfo, .symtab), the symbol table
 * once, and the program headers to turn each symbol's address into a file
 * offset.  Nothing is allocated; the file is mapped by libelf.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "go_runtime.h"

const char *const argus_go_functions[ARGUS_GO_NFNS] = {
	[ARGUS_GO_READY_FN] = "runtime.ready",
	[ARGUS_GO_EXECUTE_FN] = "runtime.execute",
	[ARGUS_GO_PARK_FN] = "runtime.park_m",
	[ARGUS_GO_EXIT_FN] = "runtime.goexit0",
};

static int not_go(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int not_go(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why && whylen) {
		va_start(ap, fmt);
		vsnprintf(why, whylen, fmt, ap);
		va_end(ap);
	}
	return 1;
}

/* The file offset of address addr in an executable PT_LOAD segment, or 0. */
static uint64_t file_offset(Elf *e, uint64_t addr)
{
	size_t n, i;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n))
		return 0;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X) &&
		    addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_filesz)
			return addr - ph.p_vaddr + ph.p_offset;
	return 0;
}

/* Past Go's stack check, when the function starts with one: CMPQ SP,
 * 16(R14) (49 3b 66 10) and JBE rel8 (76 xx) or rel32 (0f 86 xx xx xx xx),
 * then PUSHQ BP (55).  The compare reads memory, so a uprobe on it must
 * single-step it out of line (a second trap, dear under a hypervisor);
 * the kernel emulates the push.  Neither skipped instruction touches RAX
 * or R14, and a failed check re-enters the function from its start (after
 * growing the stack), so the probe still fires once per call. */
static uint64_t past_stack_check(int fd, uint64_t off)
{
	uint8_t b[11];

	if (pread(fd, b, sizeof(b), (off_t)off) != (ssize_t)sizeof(b) || memcmp(b, "\x49\x3b\x66\x10", 4) != 0)
		return off;
	if (b[4] == 0x76 && b[6] == 0x55)
		return off + 6;
	if (b[4] == 0x0f && b[5] == 0x86 && b[10] == 0x55)
		return off + 10;
	return off;
}

/* Fills out->off from the symbol table: how many were found. */
static int find_functions(Elf *e, Elf_Scn *symtab, const GElf_Shdr *sh, struct argus_go_offsets *out)
{
	Elf_Data *data = elf_getdata(symtab, NULL);
	size_t count = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0, i;
	int found = 0;

	for (i = 0; data && i < count && found < ARGUS_GO_NFNS; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
			continue;
		name = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!name || strncmp(name, "runtime.", 8) != 0)
			continue;
		for (int k = 0; k < ARGUS_GO_NFNS; k++)
			if (!out->off[k] && strcmp(name, argus_go_functions[k]) == 0 &&
			    (out->off[k] = file_offset(e, sym.st_value)))
				found++;
	}
	return found;
}

int argus_go_runtime_offsets(int fd, struct argus_go_offsets *out, char *why, size_t whylen)
{
	Elf *e;
	Elf_Scn *scn = NULL, *symtab = NULL;
	GElf_Shdr sh, symsh = { 0 };
	GElf_Ehdr eh;
	size_t shstrndx;
	bool buildinfo = false;
	int ret = 1, found;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return not_go(why, whylen, "not an ELF file");
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_machine != EM_X86_64) {
		not_go(why, whylen, "not an x86_64 ELF executable");
		goto out;
	}
	if (elf_getshdrstrndx(e, &shstrndx)) {
		not_go(why, whylen, "no section names");
		goto out;
	}
	while ((scn = elf_nextscn(e, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && strcmp(name, ".go.buildinfo") == 0)
			buildinfo = true;
		if (sh.sh_type == SHT_SYMTAB) {
			symtab = scn;
			symsh = sh;
		}
	}
	if (!buildinfo) {
		not_go(why, whylen, "no .go.buildinfo section (not a Go program)");
		goto out;
	}
	if (!symtab) {
		not_go(why, whylen, "a Go program without a symbol table (stripped)");
		goto out;
	}
	found = find_functions(e, symtab, &symsh, out);
	if (found < ARGUS_GO_NFNS) {
		not_go(why, whylen, "a Go program without %s", found ? "every scheduler function" : "runtime.execute");
		memset(out, 0, sizeof(*out));
		goto out;
	}
	for (int k = 0; k < ARGUS_GO_NFNS; k++)
		out->off[k] = past_stack_check(fd, out->off[k]);
	ret = 0;
out:
	elf_end(e);
	return ret;
}
