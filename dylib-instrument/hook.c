/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hook installation (hook.h): pick a trampoline page near the function,
 * build the thunks around the relocated prologue, refuse functions whose
 * body branches back into the patched bytes, then patch the entry.
 */
#include "hook.h"
#include "code_alloc.h"
#include "reader.h"
#include "reloc.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
#include "arch/x86_64/x86_thunk.h"
#include "arch/x86_64/x86_writer.h"

#define MAX_READ 64           /* prologue bytes examined when the size is unknown */
#define MAX_SCAN 65536        /* function bytes swept for branches into the patch */

int argus_hook_install(void *fn, const struct argus_hook_spec *spec, struct argus_hook *h)
{
	memset(h, 0, sizeof(*h));
	h->target = fn;
	h->spec = *spec;
	uint64_t target = (uint64_t)fn;
	size_t code_len = spec->fn_size ? (spec->fn_size < MAX_READ ? spec->fn_size : MAX_READ) : MAX_READ;
	size_t page_size = (size_t)sysconf(_SC_PAGESIZE);

	uint8_t *page = argus_code_page_near(target, 1ull << 31);
	if (!page)
		return -ENOMEM;
	int64_t dist = (int64_t)((uint64_t)page - (target + X86_JMP_REL32_SIZE));
	int near = argus_fits_signed(dist, 32) && argus_fits_signed(dist + (int64_t)page_size, 32);
	h->patch_len = near ? X86_JMP_REL32_SIZE : X86_JMP_ABS_SIZE;

	struct argus_reloc_result res;
	int err = argus_x86_build_thunks(h, page, page_size, fn, code_len, &res);
	if (!err && spec->fn_size > res.consumed &&
	    argus_branches_into_patch(ARGUS_ARCH_X86_64, fn, spec->fn_size < MAX_SCAN ? spec->fn_size : MAX_SCAN,
				      target, res.consumed))
		err = ARGUS_ERR_BRANCH_INTO;
	if (!err)
		err = argus_code_page_seal(page);
	if (err) {
		munmap(page, page_size);
		return err;
	}
	h->page = page;

	uint8_t patch[X86_JMP_ABS_SIZE];
	struct argus_writer w;
	argus_writer_init(&w, patch, sizeof(patch), target);
	if (near)
		x86_put_jmp_rel32(&w, (uint64_t)h->enter_thunk);
	else
		x86_put_jmp_abs(&w, (uint64_t)h->enter_thunk);
	memcpy(h->saved, fn, h->patch_len);
	if ((err = argus_code_patch(fn, patch, h->patch_len)))
		return err;
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
	int err = argus_code_patch(h->target, h->saved, h->patch_len);
	if (!err)
		h->installed = 0;
	return err;
}
