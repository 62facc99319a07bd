/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hook installation (hook.h): pick a trampoline page near the function,
 * build the thunks around the relocated prologue, refuse functions whose
 * body branches back into the patched bytes, then patch the entry with a
 * direct branch when the page is in its reach, else an absolute jump.
 */
#include "hook.h"
#include "code_alloc.h"
#include "hook_events.h"
#include "reader.h"
#include "reloc.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_READ 64           /* prologue bytes examined when the size is unknown */
#define MAX_SCAN 65536        /* function bytes swept for branches into the patch */

#if defined(__x86_64__)
#include "arch/x86_64/x86_thunk.h"
#include "arch/x86_64/x86_writer.h"

#define ARCH ARGUS_ARCH_X86_64
#define REACH (1ull << 31)                /* jmp rel32 */

static size_t patch_size(int near)
{
	return near ? X86_JMP_REL32_SIZE : X86_JMP_ABS_SIZE;
}

static int build_thunks(struct argus_hook *h, uint8_t *page, size_t size, const uint8_t *code, size_t len,
			struct argus_reloc_result *res)
{
	return argus_x86_build_thunks(h, page, size, code, len, res);
}

static void put_patch(struct argus_writer *w, int near, uint64_t to)
{
	if (near)
		x86_put_jmp_rel32(w, to);
	else
		x86_put_jmp_abs(w, to);
}
#elif defined(__aarch64__)
#include "arch/arm64/arm64_thunk.h"
#include "arch/arm64/arm64_writer.h"

#define ARCH ARGUS_ARCH_ARM64
#define REACH (1ull << 27)                /* b imm26: +-128 MiB */

static size_t patch_size(int near)
{
	return near ? 4 : A64_JMP_ABS_SIZE;
}

static int build_thunks(struct argus_hook *h, uint8_t *page, size_t size, const uint8_t *code, size_t len,
			struct argus_reloc_result *res)
{
	const struct argus_thunk_calls calls = {
		(uint64_t)h, (uint64_t)argus_hook_on_enter, (uint64_t)argus_hook_on_return,
	};
	return argus_arm64_build_thunks(h, page, (uint64_t)page, size, code, len, &calls, res);
}

static void put_patch(struct argus_writer *w, int near, uint64_t to)
{
	if (near)
		a64_put_b(w, to);
	else
		a64_put_jmp_abs(w, to);
}
#endif

#ifdef ARCH
int argus_hook_install(void *fn, const struct argus_hook_spec *spec, struct argus_hook *h)
{
	memset(h, 0, sizeof(*h));
	h->target = fn;
	h->spec = *spec;
	uint64_t target = (uint64_t)fn;
	size_t code_len = spec->fn_size ? (spec->fn_size < MAX_READ ? spec->fn_size : MAX_READ) : MAX_READ;
	size_t page_size = (size_t)sysconf(_SC_PAGESIZE);

	uint8_t *page = argus_code_page_near(target, REACH);
	if (!page)
		return -ENOMEM;
	/* the page's farthest byte within reach of a branch at the entry (the
	 * margin covers x86's rel32 counting from the end of the jmp) */
	uint64_t lo = (uint64_t)page, hi = lo + page_size;
	int near = (lo > target ? hi - target : target - lo) < REACH - 4096;
	h->patch_len = patch_size(near);

	struct argus_reloc_result res;
	int err = build_thunks(h, page, page_size, fn, code_len, &res);
	if (!err && spec->fn_size > res.consumed &&
	    argus_branches_into_patch(ARCH, fn, spec->fn_size < MAX_SCAN ? spec->fn_size : MAX_SCAN, target,
				      res.consumed))
		err = ARGUS_ERR_BRANCH_INTO;
	if (!err)
		err = argus_code_page_seal(page);
	if (err) {
		munmap(page, page_size);
		return err;
	}
	h->page = page;

	uint8_t patch[16];
	struct argus_writer w;
	argus_writer_init(&w, patch, sizeof(patch), target);
	put_patch(&w, near, (uint64_t)h->enter_thunk);
	memcpy(h->saved, fn, h->patch_len);
	if ((err = argus_code_patch(fn, patch, h->patch_len))) {
		munmap(page, page_size);   /* never entered: the entry was not patched */
		h->page = NULL;
		return err;
	}
	h->installed = 1;
	return 0;
}
#else
int argus_hook_install(void *fn, const struct argus_hook_spec *spec, struct argus_hook *h)
{
	memset(h, 0, sizeof(*h));
	return ARGUS_ERR_UNSUPPORTED;
}
#endif

int argus_hook_remove(struct argus_hook *h)
{
	if (!h->installed)
		return 0;
	int err = argus_code_unpatch(h->target, h->saved, h->patch_len);
	if (!err)
		h->installed = 0;
	return err;
}
