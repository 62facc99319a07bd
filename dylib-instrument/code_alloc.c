/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Near pages (code_alloc.h).  The kernel takes an address hint only as a
 * hint, so we probe candidate addresses at growing distances below and above
 * `near` with MAP_FIXED_NOREPLACE (never replacing an existing mapping); on
 * kernels that ignore that flag the result is checked and discarded.
 */
#include "code_alloc.h"
#include "quiesce.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#if defined(__linux__)
#include <linux/membarrier.h>
#endif
#include <unistd.h>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define STEP (1ull << 20)   /* probe every MiB: mappings are rarely denser */

static void *try_at(uint64_t addr, size_t size)
{
	void *p = mmap((void *)addr, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if ((uint64_t)p != addr) {
		munmap(p, size);
		return NULL;
	}
	return p;
}

void *argus_code_page_near(uint64_t near, uint64_t max_distance)
{
	size_t size = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t base = near & ~(STEP - 1);
	for (uint64_t d = STEP; d + STEP < max_distance; d += STEP) {
		void *p;
		if (base > d + (1ull << 16) && (p = try_at(base - d, size)))
			return p;
		if (base + d < (1ull << 47) - STEP && (p = try_at(base + d, size)))
			return p;
	}
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

int argus_code_page_seal(void *page)
{
	size_t size = (size_t)sysconf(_SC_PAGESIZE);
	if (mprotect(page, size, PROT_READ | PROT_EXEC))
		return -errno;
	__builtin___clear_cache((char *)page, (char *)page + size);
	return 0;
}

/* Cross-modifying code: a core running another thread may still hold the
 * old bytes prefetched; x86 wants a serializing instruction on it after the
 * write.  The kernel provides that for a process's own threads (membarrier
 * SYNC_CORE, Linux 4.16+); where it is missing, the write stands alone. */
static void sync_cores(void)
{
#if defined(__linux__) && defined(SYS_membarrier)
	static int registered;
	if (!registered)
		registered = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0 ? 1 : -1;
	if (registered == 1)
		syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
#endif
}

struct patch_job {
	void *addr;
	const void *bytes;
	size_t len;
};

static int write_code(void *arg)
{
	const struct patch_job *j = arg;
	void *addr = j->addr;
	size_t len = j->len;
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t start = (uint64_t)addr & ~(pg - 1);
	uint64_t end = ((uint64_t)addr + len + pg - 1) & ~(pg - 1);
	/* text pages are r-x; keeping X while writing lets other threads go on
	 * running the rest of the page */
	if (mprotect((void *)start, end - start, PROT_READ | PROT_WRITE | PROT_EXEC))
		return -errno;
	uint64_t a = (uint64_t)addr;
	if ((a & 7) + len <= 8) {
		/* a thread entering the function sees old or new bytes, never a mix */
		uint64_t *word = (uint64_t *)(a & ~7ull), v = __atomic_load_n(word, __ATOMIC_RELAXED);
		memcpy((uint8_t *)&v + (a & 7), j->bytes, len);
		__atomic_store_n(word, v, __ATOMIC_SEQ_CST);
	} else {
		memcpy(addr, j->bytes, len);
	}
	__builtin___clear_cache((char *)addr, (char *)addr + len);
	sync_cores();
	return mprotect((void *)start, end - start, PROT_READ | PROT_EXEC) ? -errno : 0;
}

int argus_code_patch(void *addr, const void *bytes, size_t len)
{
	struct patch_job job = {addr, bytes, len};
	/* no other thread may be inside the bytes replaced (quiesce.h) */
	return argus_quiesced_patch((uint64_t)addr, (uint64_t)addr + len, write_code, &job);
}

int argus_code_unpatch(void *addr, const void *saved, size_t len)
{
	struct patch_job job = {addr, saved, len};
	/* the patch is one jump: a thread is before it or past it, never inside,
	 * so one atomic store is enough; two words need the threads stopped */
	if (((uint64_t)addr & 7) + len <= 8)
		return write_code(&job);
	return argus_quiesced_patch((uint64_t)addr, (uint64_t)addr + len, write_code, &job);
}
