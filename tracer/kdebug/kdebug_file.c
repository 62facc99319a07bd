// SPDX-License-Identifier: Apache-2.0
/*
 * kdebug raw file reader and importer: see kdebug_file.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "argus_rb.h"
#include "kdebug.h"
#include "kdebug_decode.h"
#include "kdebug_file.h"

#define MAX_EVENT_SPANS (1u << 24)   /* event chunks; beyond this the file is nonsense */

struct span {
	uint64_t off, len;           /* bytes of kd_bufs in the file */
};

struct layout {
	uint32_t format;
	uint32_t numer, denom;       /* 0/0: not in the file */
	uint64_t map_off, map_count; /* thread map entries */
	struct span *spans;
	size_t nspans, cap;
	uint64_t nevents;
	uint64_t wall_ticks, wall_ns; /* V3: the header's timestamp and the wall clock then; 0: unknown */
};

static int fail(struct argus_kdebug_import_result *r, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->error, sizeof r->error, fmt, ap);
	va_end(ap);
	return -err;
}

static int add_span(struct layout *l, uint64_t off, uint64_t len)
{
	if (!len)
		return 0;
	if (l->nspans >= MAX_EVENT_SPANS)
		return -E2BIG;
	if (l->nspans == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 64;
		struct span *n = realloc(l->spans, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		l->spans = n;
		l->cap = ncap;
	}
	l->spans[l->nspans++] = (struct span){ off, len };
	l->nevents += len / sizeof(struct kd_buf64);
	return 0;
}

static int parse_v1(const uint8_t *p, uint64_t size, struct layout *l, struct argus_kdebug_import_result *r)
{
	struct kd_raw_header_v1 h;
	if (size < sizeof h)
		return fail(r, EINVAL, "truncated V1 header (%llu bytes)", (unsigned long long)size);
	memcpy(&h, p, sizeof h);
	if (h.thread_count < 0)
		return fail(r, EINVAL, "corrupt V1 header: thread count %d", h.thread_count);
	uint64_t map_end = sizeof h + (uint64_t)h.thread_count * sizeof(struct kd_threadmap64);
	if (map_end > size)
		return fail(r, EINVAL, "truncated: the V1 thread map of %d entries needs %llu bytes, the file has %llu",
			    h.thread_count, (unsigned long long)map_end, (unsigned long long)size);
	uint64_t ev = (map_end + KD_V1_EVENT_ALIGN - 1) / KD_V1_EVENT_ALIGN * KD_V1_EVENT_ALIGN;
	if (ev > size)
		return fail(r, EINVAL, "truncated: V1 events should start at offset %llu, the file has %llu bytes",
			    (unsigned long long)ev, (unsigned long long)size);
	if ((size - ev) % sizeof(struct kd_buf64))
		return fail(r, EINVAL, "truncated: %llu trailing bytes after the last whole 64-byte event",
			    (unsigned long long)((size - ev) % sizeof(struct kd_buf64)));
	l->format = 1;
	l->map_off = sizeof h;
	l->map_count = (uint64_t)h.thread_count;
	int rc = add_span(l, ev, size - ev);
	return rc < 0 ? fail(r, -rc, "out of memory") : 0;
}

static int parse_v3(const uint8_t *p, uint64_t size, struct layout *l, struct argus_kdebug_import_result *r)
{
	struct kd_chunk_header_v3 c;
	struct kd_header_v3_payload hp;
	const uint64_t ch = sizeof c;

	memcpy(&c, p, sizeof c);
	if (c.length < sizeof hp || c.length > size - ch)
		return fail(r, EINVAL, "%s V3 header chunk (length %llu, file %llu bytes)",
			    c.length > size - ch ? "truncated" : "corrupt", (unsigned long long)c.length,
			    (unsigned long long)size);
	memcpy(&hp, p + ch, sizeof hp);
	l->format = 3;
	l->numer = hp.timebase_numer;
	l->denom = hp.timebase_denom;
	if (!l->numer != !l->denom)
		return fail(r, EINVAL, "corrupt V3 header: timebase %u/%u", l->numer, l->denom);
	if (hp.walltime_secs && hp.walltime_secs < UINT64_MAX / 1000000000ull - 1) {
		l->wall_ticks = hp.timestamp;
		l->wall_ns = hp.walltime_secs * 1000000000ull + (uint64_t)hp.walltime_usecs * 1000ull;
	}

	/* The header's length spans its sub-chunks (the CPU map): continue
	 * after its fixed payload so they are walked like any other chunk. */
	uint64_t off = ch + sizeof hp;
	while (off < size) {
		if (size - off < ch)
			return fail(r, EINVAL, "truncated: %llu bytes at offset %llu cannot hold a chunk header",
				    (unsigned long long)(size - off), (unsigned long long)off);
		memcpy(&c, p + off, sizeof c);
		uint64_t avail = size - off - ch, body = off + ch, len = c.length;
		if (len > avail)
			return fail(r, EINVAL, "truncated: chunk 0x%x at offset %llu claims %llu bytes, %llu remain",
				    c.tag, (unsigned long long)off, (unsigned long long)len, (unsigned long long)avail);
		switch (c.tag) {
		case KD_V3_THREAD_MAP:
			if (len % sizeof(struct kd_threadmap64))
				return fail(r, EINVAL, "corrupt thread map chunk at offset %llu: %llu bytes is not whole entries",
					    (unsigned long long)off, (unsigned long long)len);
			l->map_off = body;
			l->map_count = len / sizeof(struct kd_threadmap64);
			break;
		case KD_V3_RAW_EVENTS: {
			uint64_t total = len;   /* bytes after the 16-byte header */
			if (len % sizeof(struct kd_buf64) == 0)
				total = len + 8;    /* current kernels: timestamp not counted */
			else if (len % sizeof(struct kd_buf64) != 8)
				return fail(r, EINVAL, "corrupt event chunk at offset %llu: %llu bytes is not whole events",
					    (unsigned long long)off, (unsigned long long)len);
			if (total > avail)
				return fail(r, EINVAL, "truncated: event chunk at offset %llu needs %llu bytes, %llu remain",
					    (unsigned long long)off, (unsigned long long)total, (unsigned long long)avail);
			int rc = add_span(l, body + 8, total - 8);
			if (rc == -E2BIG)
				return fail(r, EINVAL, "corrupt: more than %u event chunks", MAX_EVENT_SPANS);
			if (rc < 0)
				return fail(r, -rc, "out of memory");
			len = total;
			break;
		}
		case KD_V3_HEADER:
			return fail(r, EINVAL, "corrupt: a second V3 header chunk at offset %llu", (unsigned long long)off);
		default:
			break;          /* config, CPU map, null, or newer chunks: not needed */
		}
		off = body + len;
	}
	return 0;
}

static int parse(const uint8_t *p, uint64_t size, struct layout *l, struct argus_kdebug_import_result *r)
{
	uint32_t magic;
	if (size < 4)
		return fail(r, EINVAL, "not a kdebug trace: %llu bytes", (unsigned long long)size);
	memcpy(&magic, p, 4);
	switch (magic) {
	case KD_RAW_VERSION1:
		return parse_v1(p, size, l, r);
	case KD_V3_HEADER:
		if (size < sizeof(struct kd_chunk_header_v3))
			return fail(r, EINVAL, "truncated V3 header (%llu bytes)", (unsigned long long)size);
		return parse_v3(p, size, l, r);
	case KD_RAW_VERSION2:
		return fail(r, ENOTSUP, "RAW_VERSION2 (kperf / Instruments) traces are not supported");
	case KD_RAW_ARTRACE:
		return fail(r, ENOTSUP, "`ktrace artrace` files (magic 0x55aa0300) are not supported: their layout is undocumented");
	default:
		return fail(r, EINVAL, "not a kdebug V1 or V3 trace (magic 0x%08x)", magic);
	}
}

struct sink {
	struct argus_rb_producer prod;
	struct argus_rb *rb;
	uint64_t written;
};

static int sink_emit(void *ctx, const void *rec, uint32_t size)
{
	struct sink *s = ctx;
	int rc = argus_rb_write(&s->prod, rec, size);
	if (rc == 0)
		s->written++;
	return rc;
}

static uint64_t first_timestamp(const uint8_t *p, const struct layout *l)
{
	for (size_t i = 0; i < l->nspans; i++)
		if (l->spans[i].len) {
			uint64_t ts;
			memcpy(&ts, p + l->spans[i].off, sizeof ts);
			return ts;
		}
	return 0;
}

static int import_mapped(const uint8_t *p, uint64_t size, const char *out,
			 const struct argus_kdebug_import_opts *o, struct argus_kdebug_import_result *r)
{
	struct layout l = { 0 };
	struct sink s = { 0 };
	struct kdd *d = NULL;
	struct kd_threadmap64 *map = NULL;
	int rc = parse(p, size, &l, r);
	if (rc < 0)
		goto cleanup;

	struct kdd_config cfg = { 0 };
	cfg.trace_syscalls = o->trace_syscalls;
	if (o->timebase_numer && o->timebase_denom) {
		cfg.timebase_numer = o->timebase_numer;
		cfg.timebase_denom = o->timebase_denom;
	} else if (l.numer && l.denom) {
		cfg.timebase_numer = l.numer;
		cfg.timebase_denom = l.denom;
	} else {
		cfg.timebase_numer = cfg.timebase_denom = 1;
	}
	r->format = l.format;
	r->timebase_numer = cfg.timebase_numer;
	r->timebase_denom = cfg.timebase_denom;
	r->threads = l.map_count;

	/* Each kd_buf yields at most two records of <= 48 bytes; the ring
	 * buffer must not wrap during an import or the oldest events vanish. */
	uint64_t need = (l.nevents * 2 + l.map_count + 16) * 48;
	uint64_t bytes = o->buffer_size ? o->buffer_size : need + need / 4 + (16ull << 20);
	bytes = (bytes + (1ull << 20) - 1) & ~((1ull << 20) - 1);
	r->buffer_size = bytes;
	rc = argus_rb_create(out, bytes, ARGUS_RB_DEFAULT_CHUNK_SIZE, &s.rb);
	if (rc < 0) {
		/* the ring buffer's message names the file */
		rc = fail(r, -rc, "failed to create the buffer: %s", s.rb ? argus_rb_error(s.rb) : strerror(-rc));
		goto cleanup;
	}
	argus_rb_producer_init(s.rb, &s.prod, 1);
	d = kdd_create(&cfg, sink_emit, &s);
	if (!d) {
		rc = fail(r, ENOMEM, "out of memory");
		goto cleanup;
	}
	/* The creation stamps map record times to the wall clock (docs/ring-buffer.md);
	 * this machine's clocks at import say nothing about another machine's trace:
	 * use the V3 header's wall clock at its timestamp, or 0 (unknown, V1).  Set
	 * before any record is written, so no reader has seen other stamps. */
	struct argus_rb_file_header *fh = argus_rb_header(s.rb);
	fh->created_ns = l.wall_ns ? kdd_ns(d, l.wall_ticks) : 0;
	fh->created_realtime_ns = l.wall_ns;
	if (l.map_count) {
		/* copy: the file gives no alignment guarantee for the entries */
		map = malloc(l.map_count * sizeof(*map));
		if (!map) {
			rc = fail(r, ENOMEM, "out of memory for %llu thread map entries", (unsigned long long)l.map_count);
			goto cleanup;
		}
		memcpy(map, p + l.map_off, l.map_count * sizeof(*map));
		r->threads = 0;
		for (uint64_t i = 0; i < l.map_count; i++)
			r->threads += map[i].thread != 0;   /* V1 pads with zeroed entries */
		rc = kdd_threadmap(d, map, l.map_count, first_timestamp(p, &l));
		if (rc < 0) {
			rc = fail(r, -rc, "failed to write %s: %s", out, argus_rb_error(s.rb));
			goto cleanup;
		}
	}
	for (size_t i = 0; i < l.nspans; i++) {
		struct kd_buf64 batch[256];
		for (uint64_t o2 = 0; o2 < l.spans[i].len; o2 += sizeof batch) {
			uint64_t n = l.spans[i].len - o2 < sizeof batch ? l.spans[i].len - o2 : sizeof batch;
			memcpy(batch, p + l.spans[i].off + o2, n);
			rc = kdd_feed(d, batch, n / sizeof(batch[0]));
			if (rc < 0) {
				rc = fail(r, -rc, "failed to write %s: %s", out, argus_rb_error(s.rb));
				goto cleanup;
			}
		}
	}
	struct kdd_stats st;
	kdd_get_stats(d, &st);
	r->kd_events = st.kd_records;
	r->records = s.written;
	r->lost_markers = st.lost_markers;
	r->patched_events = st.patched_events;
	rc = 0;
cleanup:
	if (s.rb) {
		if (s.prod.rb)
			argus_rb_producer_close(&s.prod);
		argus_rb_close(s.rb);
	}
	kdd_destroy(d);
	free(map);
	free(l.spans);
	return rc;
}

int argus_kdebug_import(const char *trace_path, const char *buffer_path,
			const struct argus_kdebug_import_opts *opts,
			struct argus_kdebug_import_result *result)
{
	struct stat st;
	int fd, rc;

	memset(result, 0, sizeof *result);
	/* O_NONBLOCK: a FIFO or device must not block the open before fstat
	 * refuses it; O_NOFOLLOW: like every Argus file open, no links. */
	fd = open(trace_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	if (fd < 0 && errno == ELOOP)
		return fail(result, ELOOP, "%s is a symbolic link: refused, pass the file it points to", trace_path);
	if (fd < 0)
		return fail(result, errno, "cannot open %s: %s", trace_path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		rc = fail(result, errno, "cannot stat %s: %s", trace_path, strerror(errno));
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return fail(result, EINVAL, "%s is not a regular file", trace_path);
	}
	if (st.st_size == 0) {
		close(fd);
		return fail(result, EINVAL, "%s is empty", trace_path);
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return fail(result, errno, "cannot map %s: %s", trace_path, strerror(errno));
	rc = import_mapped(p, (uint64_t)st.st_size, buffer_path, opts, result);
	munmap(p, (size_t)st.st_size);
	return rc;
}

struct mem_sink {
	uint8_t *out;
	size_t cap, used;
};

static int mem_emit(void *ctx, const void *rec, uint32_t size)
{
	struct mem_sink *m = ctx;
	if (m->cap - m->used < size)
		return -ENOSPC;
	memcpy(m->out + m->used, rec, size);
	m->used += size;
	return 0;
}

int argus_kdebug_decode_mem(const void *kdbufs, size_t nbufs, const void *threadmap, size_t nmap,
			    uint32_t numer, uint32_t denom, int trace_syscalls,
			    void *out, size_t out_cap, size_t *out_len)
{
	struct mem_sink m = { out, out_cap, 0 };
	struct kdd_config cfg = { numer, denom, 0, trace_syscalls };
	struct kdd *d = kdd_create(&cfg, mem_emit, &m);
	int rc = 0;

	if (!d)
		return -ENOMEM;
	if (nmap) {
		struct kd_threadmap64 *map = malloc(nmap * sizeof(*map));
		if (!map) {
			kdd_destroy(d);
			return -ENOMEM;
		}
		memcpy(map, threadmap, nmap * sizeof(*map));
		uint64_t ts0 = 0;
		if (nbufs)
			memcpy(&ts0, kdbufs, sizeof ts0);
		rc = kdd_threadmap(d, map, nmap, ts0);
		free(map);
	}
	for (size_t i = 0; rc == 0 && i < nbufs; i++) {
		struct kd_buf64 k;
		memcpy(&k, (const uint8_t *)kdbufs + i * sizeof k, sizeof k);
		rc = kdd_feed(d, &k, 1);
	}
	*out_len = m.used;
	kdd_destroy(d);
	return rc;
}
