// SPDX-License-Identifier: Apache-2.0
/*
 * go_runtime.c on ELF files written here with libelf: a Go-like executable
 * (.go.buildinfo, a .symtab with the scheduler functions in .text at
 * address 0x401000, an executable PT_LOAD mapping it), and the ways a file
 * is not one: no .go.buildinfo, stripped, a function missing, another
 * machine, not ELF at all.
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "go_runtime.h"

#define BASE 0x400000u
#define TEXT_OFF 0x1000u

enum { WITH_BUILDINFO = 1, WITH_SYMTAB = 2, ALL_FUNCTIONS = 4, X86_64 = 8, GO_LIKE = 15 };

static Elf_Scn *section(Elf *e, const char *label, uint32_t name, uint32_t type, void *buf, size_t size,
			uint64_t addr, uint64_t flags)
{
	Elf_Scn *s = elf_newscn(e);
	Elf_Data *d = elf_newdata(s);
	GElf_Shdr sh;

	(void)label;   /* the name at offset name in .shstrtab, for the reader */
	d->d_buf = buf;
	d->d_size = size;
	d->d_align = 1;
	d->d_type = ELF_T_BYTE;
	gelf_getshdr(s, &sh);
	sh.sh_name = name;
	sh.sh_type = type;
	sh.sh_addr = addr;
	sh.sh_flags = flags;
	gelf_update_shdr(s, &sh);
	return s;
}

static uint64_t text_off;   /* where libelf put .text in the last file written */

/* Writes a test executable; returns an fd open on it (read only). */
static int write_elf(unsigned what)
{
	static char shstr[] = "\0.text\0.go.buildinfo\0.symtab\0.strtab\0.shstrtab";
	static char strtab[] = "\0runtime.ready\0runtime.execute\0runtime.park_m\0runtime.goexit0\0main.main";
	/* runtime.ready (0x10): Go's stack check with a rel32 jump; execute
	 * (0x20): with a rel8 one; the others: no check (probed at entry) */
	static uint8_t text[0x100] = {
		[0x10] = 0x49, 0x3b, 0x66, 0x10, 0x0f, 0x86, 1, 0, 0, 0, 0x55,
		[0x20] = 0x49, 0x3b, 0x66, 0x10, 0x76, 0x18, 0x55,
		[0x30] = 0x55,
	};
	static uint8_t info[32] = "\xff Go buildinf:";
	Elf64_Sym syms[6];
	char path[] = "/tmp/go_runtime_test.XXXXXX";
	int fd = mkstemp(path), nsyms = 0;
	Elf *e;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf_Scn *strs = NULL, *symtab, *names;
	GElf_Shdr sh;

	assert_true(fd >= 0);
	unlink(path);
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	assert_non_null(e);
	eh = elf64_newehdr(e);
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_EXEC;
	eh->e_machine = (what & X86_64) ? EM_X86_64 : EM_AARCH64;
	eh->e_version = EV_CURRENT;
	ph = elf64_newphdr(e, 1);
	section(e, ".text", 1, SHT_PROGBITS, text, sizeof(text), BASE + TEXT_OFF, SHF_ALLOC | SHF_EXECINSTR);
	if (what & WITH_BUILDINFO)
		section(e, ".go.buildinfo", 7, SHT_PROGBITS, info, sizeof(info), 0, SHF_ALLOC | SHF_WRITE);
	if (what & WITH_SYMTAB) {
		memset(syms, 0, sizeof(syms));
		nsyms = 1;
		for (uint32_t name = 1, k = 0; k < 5; k++) {
			const char *n = strtab + name;

			if (!(what & ALL_FUNCTIONS) && strcmp(n, "runtime.park_m") == 0) {
				name += (uint32_t)strlen(n) + 1;
				continue;
			}
			syms[nsyms].st_name = name;
			syms[nsyms].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
			syms[nsyms].st_shndx = 1;
			syms[nsyms].st_value = BASE + TEXT_OFF + 0x10 * (k + 1);
			syms[nsyms].st_size = 0x10;
			nsyms++;
			name += (uint32_t)strlen(n) + 1;
		}
		symtab = section(e, ".symtab", 21, SHT_SYMTAB, syms, sizeof(Elf64_Sym) * nsyms, 0, 0);
		elf_getdata(symtab, NULL)->d_type = ELF_T_SYM;
		strs = section(e, ".strtab", 29, SHT_STRTAB, strtab, sizeof(strtab), 0, 0);
		gelf_getshdr(symtab, &sh);
		sh.sh_link = (uint32_t)elf_ndxscn(strs);
		sh.sh_entsize = sizeof(Elf64_Sym);
		gelf_update_shdr(symtab, &sh);
	}
	names = section(e, ".shstrtab", 37, SHT_STRTAB, shstr, sizeof(shstr), 0, 0);
	eh->e_shstrndx = (uint16_t)elf_ndxscn(names);
	assert_true(elf_update(e, ELF_C_NULL) > 0);
	/* one executable PT_LOAD from file offset 0 that maps .text to its address */
	gelf_getshdr(elf_getscn(e, 1), &sh);
	text_off = sh.sh_offset;
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R | PF_X;
	ph->p_offset = 0;
	ph->p_vaddr = ph->p_paddr = BASE + TEXT_OFF - text_off;
	ph->p_filesz = ph->p_memsz = text_off + sizeof(text);
	ph->p_align = 1;
	assert_true(elf_update(e, ELF_C_WRITE) > 0);
	elf_end(e);
	return fd;
}

static void test_a_go_executable_gives_each_functions_file_offset(void **state)
{
	struct argus_go_offsets off;
	char why[128] = "";
	int fd;

	(void)state;
	fd = write_elf(GO_LIKE);
	assert_int_equal(argus_go_runtime_offsets(fd, &off, why, sizeof(why)), 0);
	assert_int_equal(off.off[ARGUS_GO_READY_FN], text_off + 0x10 + 10);   /* at the push */
	assert_int_equal(off.off[ARGUS_GO_EXECUTE_FN], text_off + 0x20 + 6);
	assert_int_equal(off.off[ARGUS_GO_PARK_FN], text_off + 0x30);
	assert_int_equal(off.off[ARGUS_GO_EXIT_FN], text_off + 0x40);
	close(fd);
}

static void expect_not_go(unsigned what, const char *reason)
{
	struct argus_go_offsets off;
	char why[128] = "";
	int fd = write_elf(what);

	assert_int_equal(argus_go_runtime_offsets(fd, &off, why, sizeof(why)), 1);
	assert_non_null(strstr(why, reason));
	assert_int_equal(off.off[ARGUS_GO_READY_FN], 0);
	close(fd);
}

static void test_files_that_are_not_probed_say_why(void **state)
{
	int fd;
	struct argus_go_offsets off;
	char why[128] = "";

	(void)state;
	expect_not_go(GO_LIKE & ~WITH_BUILDINFO, "not a Go program");
	expect_not_go(GO_LIKE & ~WITH_SYMTAB, "stripped");
	expect_not_go(GO_LIKE & ~ALL_FUNCTIONS, "without every scheduler function");
	expect_not_go(GO_LIKE & ~X86_64, "not an x86_64 ELF");
	fd = open("/dev/null", O_RDONLY);
	assert_int_equal(argus_go_runtime_offsets(fd, &off, why, sizeof(why)), 1);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_go_executable_gives_each_functions_file_offset),
		cmocka_unit_test(test_files_that_are_not_probed_say_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
