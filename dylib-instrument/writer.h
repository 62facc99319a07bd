/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The code writer's core: a bounded byte buffer that knows the address its
 * bytes will run at.  The per-architecture writers (arch/<arch>/) put whole
 * instructions on top of it.  Overflow is sticky and checked once at the
 * end, so emitters need no error paths of their own.
 */
#ifndef ARGUS_WRITER_H
#define ARGUS_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct argus_writer {
	uint8_t *base;
	size_t cap;
	size_t len;
	uint64_t pc;       /* address of base[0] when it runs */
	int overflow;
};

static inline void argus_writer_init(struct argus_writer *w, uint8_t *base, size_t cap, uint64_t pc)
{
	w->base = base;
	w->cap = cap;
	w->len = 0;
	w->pc = pc;
	w->overflow = 0;
}

static inline uint64_t argus_writer_pc(const struct argus_writer *w)
{
	return w->pc + w->len;
}

static inline void argus_put_bytes(struct argus_writer *w, const void *p, size_t n)
{
	if (w->len + n > w->cap) {
		w->overflow = 1;
		return;
	}
	memcpy(w->base + w->len, p, n);
	w->len += n;
}

static inline void argus_put_u8(struct argus_writer *w, uint8_t v) { argus_put_bytes(w, &v, 1); }
/* Little endian on both supported architectures. */
static inline void argus_put_u32(struct argus_writer *w, uint32_t v) { argus_put_bytes(w, &v, 4); }
static inline void argus_put_u64(struct argus_writer *w, uint64_t v) { argus_put_bytes(w, &v, 8); }

static inline int argus_fits_signed(int64_t v, int bits)
{
	int64_t lim = (int64_t)1 << (bits - 1);
	return v >= -lim && v < lim;
}

#endif
