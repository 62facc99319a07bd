/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-thread rings (uring.h).  The producer functions run inside trampolines:
 * they touch no floating-point or vector register (the file is built with
 * -mgeneral-regs-only where the compiler has it), call nothing and never
 * block; create/close run once per thread, from the slow path.
 */
#include "uring.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef MAP_POPULATE
#define MAP_POPULATE 0   /* macOS: no prefault flag; the first lap faults */
#endif

#define MIN_RECORD ((uint32_t)sizeof(struct argus_event_header))

/* populate: the producer's first lap would otherwise take a page fault
 * every 4 KiB inside trampolines */
static int map_ring(struct argus_uring *r, int fd, size_t map_size, int populate)
{
	void *p = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	r->hdr = p;
	r->data = (uint8_t *)p + ARGUS_URING_HEADER_SIZE;
	r->map_size = map_size;
	return 0;
}

int argus_uring_create(struct argus_uring *r, const char *path, uint32_t data_size,
		       uint32_t pid, uint32_t tid, uint32_t clock_id)
{
	if (data_size < 4096 || (data_size & (data_size - 1)))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	size_t map_size = ARGUS_URING_HEADER_SIZE + (size_t)data_size;
	int err = ftruncate(fd, (off_t)map_size) ? -errno : map_ring(r, fd, map_size, 1);
	close(fd);
	if (err) {
		unlink(path);
		return err;
	}
	struct argus_uring_header *h = r->hdr;
	h->version = ARGUS_URING_VERSION;
	h->header_size = ARGUS_URING_HEADER_SIZE;
	h->pid = pid;
	h->tid = tid;
	h->data_size = data_size;
	h->clock_id = clock_id;
	r->mask = data_size - 1;
	/* magic last: a reader that sees it sees a complete header */
	__atomic_store_n(&h->magic, ARGUS_URING_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

static uint64_t free_space(struct argus_uring *r, uint64_t head)
{
	return r->hdr->data_size - (head - r->tail_cache);
}

void *argus_uring_reserve(struct argus_uring *r, uint32_t size)
{
	struct argus_uring_header *h = r->hdr;
	uint64_t head = h->head;   /* only this thread writes head */
	uint64_t to_end = h->data_size - (head & r->mask);
	uint64_t need = size <= to_end ? size : to_end + size;

	if (free_space(r, head) < need) {
		r->tail_cache = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
		if (free_space(r, head) < need) {
			__atomic_store_n(&h->lost, h->lost + 1, __ATOMIC_RELAXED);
			return NULL;
		}
	}
	if (size > to_end) {
		if (to_end >= MIN_RECORD) {   /* a pad always runs to the end */
			struct argus_event_header *pad = (void *)(r->data + (head & r->mask));
			pad->type = ARGUS_URING_PAD;
			pad->size = 0;
		}
		head += to_end;
		__atomic_store_n(&h->head, head, __ATOMIC_RELEASE);
	}
	return r->data + (head & r->mask);
}

void argus_uring_commit(struct argus_uring *r, uint32_t size)
{
	__atomic_store_n(&r->hdr->head, r->hdr->head + size, __ATOMIC_RELEASE);
}

void argus_uring_close(struct argus_uring *r)
{
	if (!r->hdr)
		return;
	__atomic_store_n(&r->hdr->closed, 1, __ATOMIC_RELEASE);
	argus_uring_unmap(r);
}

int argus_uring_open(struct argus_uring *r, const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		memset(r, 0, sizeof(*r));
		return -errno;
	}
	int err = argus_uring_open_fd(r, fd);
	close(fd);
	return err;
}

int argus_uring_open_fd(struct argus_uring *r, int fd)
{
	memset(r, 0, sizeof(*r));
	struct stat st;
	int err = fstat(fd, &st) ? -errno : 0;
	if (!err && (!S_ISREG(st.st_mode) || st.st_size < ARGUS_URING_HEADER_SIZE + 4096))
		err = -EINVAL;
	if (!err)
		err = map_ring(r, fd, (size_t)st.st_size, 0);
	if (err)
		return err;
	struct argus_uring_header *h = r->hdr;
	uint64_t ds = h->data_size;
	if (__atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != ARGUS_URING_MAGIC ||
	    h->header_size != ARGUS_URING_HEADER_SIZE || ds < 4096 || (ds & (ds - 1)) ||
	    ds + ARGUS_URING_HEADER_SIZE != (uint64_t)st.st_size) {
		argus_uring_unmap(r);
		return -EINVAL;
	}
	r->mask = ds - 1;
	return 0;
}

long argus_uring_drain(struct argus_uring *r, argus_uring_fn fn, void *arg)
{
	struct argus_uring_header *h = r->hdr;
	uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
	uint64_t tail = h->tail, ds = r->mask + 1;
	long n = 0;

	if (head - tail > ds)
		return -1;   /* the producer's counters cannot be trusted */
	while (tail < head) {
		uint64_t to_end = ds - (tail & r->mask);
		if (to_end < MIN_RECORD) {
			tail += to_end;
			continue;
		}
		const struct argus_event_header *rec = (const void *)(r->data + (tail & r->mask));
		if (rec->type == ARGUS_URING_PAD) {   /* the rest up to the end is padding */
			tail += to_end;
			continue;
		}
		uint32_t size = rec->size;
		if (size < MIN_RECORD || size % 8 || size > to_end || size > head - tail)
			return -1;
		fn(rec, arg);
		n++;
		tail += size;
	}
	__atomic_store_n(&h->tail, tail, __ATOMIC_RELEASE);
	return n;
}

void argus_uring_unmap(struct argus_uring *r)
{
	if (r->hdr)
		munmap(r->hdr, r->map_size);
	r->hdr = NULL;
}
