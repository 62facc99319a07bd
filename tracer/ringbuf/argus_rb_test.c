// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the ring buffer (argus_rb.c), on real files in a private
 * temporary directory.  The invariants of argus_rb.h / argus_rb.c checked:
 *
 *   header      the file describes itself: magic, version, sizes of both
 *               header structs, schema, geometry (aligned, inside the file,
 *               as many chunks as fit), on disk and after a reopen; a damaged
 *               field is refused with its name and offset
 *   accessor    argus_rb_chunk_data / chunk_header: every (index, offset,
 *               length) outside the data area is NULL, including the ones
 *               whose sum would wrap
 *   wrap        after several laps the readable records are the newest,
 *               contiguous, in seq order; I3 accounting is exact
 *               (written = present + overwritten, chunks taken = next_seq)
 *   window      a windowed read hands every record in the window to fn and
 *               the rest to outside_fn, in the same order as a full read
 *   damage      a chunk header claiming more bytes than a chunk is dropped
 *               and its time range reported; a malformed record frame is
 *               passed once with the bytes left and ends its chunk only
 *   torn        a reader racing a writer that laps the ring never sees a
 *               record that is not intact (seqlock)
 *   dead owner  records of a producer that died holding a chunk stay
 *               readable, and the next taker seals and counts them
 *
 * The file includes argus_rb.c itself so that the static accessors can be
 * called directly.
 */
#include "argus_rb.c"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <sys/wait.h>
#include <cmocka.h>

#define CHUNK 4096u
#define FILE_SIZE (64u << 10)           /* 15 chunks of 4 KiB after the table */
#define MAX_SEQS 100000

struct fixture {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/argus-rb-test.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/t.argus", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	DIR *d = opendir(f->dir);
	struct dirent *e;
	char p[PATH_MAX];

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", f->dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* ---- records: header + payload words derived from seq ------------------- */

static uint32_t size_of(uint64_t seq)
{
	return 32 + 8 * (uint32_t)(seq % 8);    /* 32..88 bytes */
}

/* Word 0 is seq itself, the others differ in every record. */
static uint64_t word(uint64_t seq, unsigned k)
{
	return k ? seq * 0x9e3779b97f4a7c15ull + k : seq;
}

static void make_rec(uint8_t *buf, uint64_t seq, uint64_t ts, uint32_t size)
{
	struct argus_event_header h = { .ts_ns = ts, .pid = 1, .tid = 2, .type = ARGUS_EV_LOST,
					.size = (uint16_t)size };

	memcpy(buf, &h, sizeof(h));
	for (unsigned k = 0; k < (size - sizeof(h)) / 8; k++) {
		uint64_t w = word(seq, k);

		memcpy(buf + sizeof(h) + 8 * k, &w, 8);
	}
}

/* The record's seq if it is intact (frame and every payload word), else UINT64_MAX. */
static uint64_t intact_seq(const void *rec, uint32_t size)
{
	struct argus_event_header h;
	uint64_t seq, w;

	if (size < 32 || size % 8)
		return UINT64_MAX;
	memcpy(&h, rec, sizeof(h));
	if (h.size != size || h.type != ARGUS_EV_LOST)
		return UINT64_MAX;
	memcpy(&seq, (const uint8_t *)rec + sizeof(h), 8);
	for (unsigned k = 0; k < (size - sizeof(h)) / 8; k++) {
		memcpy(&w, (const uint8_t *)rec + sizeof(h) + 8 * k, 8);
		if (w != word(seq, k))
			return UINT64_MAX;
	}
	return size == size_of(seq) ? seq : UINT64_MAX;
}

static void write_records(struct argus_rb_producer *p, uint64_t from, uint64_t to)
{
	uint8_t buf[ARGUS_EVENT_MAX_SIZE];

	for (uint64_t seq = from; seq < to; seq++) {
		make_rec(buf, seq, 1000 + seq * 10, size_of(seq));
		assert_int_equal(argus_rb_write(p, buf, size_of(seq)), 0);
	}
}

static struct argus_rb *create(struct fixture *f)
{
	struct argus_rb *rb = NULL;
	int rc = argus_rb_create(f->path, FILE_SIZE, CHUNK, &rb);

	if (rc)
		fail_msg("create: %s", argus_rb_error(rb));
	return rb;
}

/* What a read saw: seqs and chunk seqs, the visits of bad frames. */
struct seen {
	uint64_t n, bad;
	uint64_t seq[MAX_SEQS], chunk_seq[MAX_SEQS];
	uint32_t bad_size[8];
	uint64_t bad_chunk[8];
};

static int collect(const void *rec, uint32_t size, uint64_t chunk_seq, void *ctx)
{
	struct seen *s = ctx;
	uint64_t seq = intact_seq(rec, size);

	if (seq == UINT64_MAX) {
		if (s->bad < 8) {
			s->bad_size[s->bad] = size;
			s->bad_chunk[s->bad] = chunk_seq;
		}
		s->bad++;
		return 0;
	}
	assert_true(s->n < MAX_SEQS);
	s->seq[s->n] = seq;
	s->chunk_seq[s->n++] = chunk_seq;
	return 0;
}

/* ---- header --------------------------------------------------------------- */

static void test_header_describes_the_file(void **state)
{
	struct fixture *f = *state;
	struct argus_rb *rb = create(f), *ro = NULL;
	struct argus_rb_file_header *h = argus_rb_header(rb), disk;
	uint64_t n, table_end;
	struct stat st;
	int fd;

	assert_memory_equal(h->magic, ARGUS_RB_MAGIC, 8);
	assert_int_equal(h->version, ARGUS_RB_VERSION);
	assert_int_equal(h->header_size, sizeof(struct argus_rb_file_header));
	assert_int_equal(h->chunk_header_size, sizeof(struct argus_rb_chunk_header));
	assert_int_equal(h->schema_version, ARGUS_SCHEMA_VERSION);
	assert_int_equal(h->file_size, FILE_SIZE);
	assert_int_equal(h->chunk_size, CHUNK);
	assert_true(h->created_ns > 0 && h->created_realtime_ns > 0);
	{       /* the creator's host: its uname() hostname, and a boot id */
		static const uint8_t zero[16];
		uint8_t boot_id[16];
		char hostname[65];
		struct utsname u;

		assert_int_equal(uname(&u), 0);
		assert_int_equal(argus_rb_identity(rb, boot_id, hostname), 0);
		assert_string_equal(hostname, u.nodename);
		assert_true(memcmp(boot_id, zero, 16) != 0);
	}
	assert_int_equal(h->next_seq, 0);
	assert_int_equal(h->records_written, 0);
	/* geometry: table after the header, data after the table, all inside */
	n = h->nchunks;
	table_end = h->chunk_table_offset + n * h->chunk_header_size;
	assert_true(h->chunk_table_offset >= h->header_size);
	assert_int_equal(h->chunk_table_offset % CHUNK_TABLE_ALIGN, 0);
	assert_int_equal(h->data_offset % DATA_ALIGN, 0);
	assert_true(h->data_offset >= table_end);
	assert_true(h->data_offset + n * h->chunk_size <= h->file_size);
	/* as many chunks as fit: one more would not */
	assert_true(align_up(h->chunk_table_offset + (n + 1) * h->chunk_header_size, DATA_ALIGN) +
		    (n + 1) * h->chunk_size > h->file_size);
	assert_int_equal(n, 15);
	/* the header is in the file, not only in our mapping; owner-only */
	fd = open(f->path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &disk, sizeof(disk), 0), sizeof(disk));
	assert_memory_equal(&disk, h, sizeof(disk));
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, FILE_SIZE);
	close(fd);
	argus_rb_close(rb);
	/* a reader adopts the same geometry */
	assert_int_equal(argus_rb_open(f->path, 0, &ro), 0);
	assert_int_equal(ro->nchunks, n);
	assert_int_equal(ro->chunk_size, CHUNK);
	assert_int_equal(ro->data_offset, argus_rb_header(ro)->data_offset);
	argus_rb_close(ro);
}

struct damage {
	unsigned offset;             /* into the file header */
	uint64_t value;
	unsigned width;              /* bytes written */
	int err;                     /* argus_rb_open's return */
	const char *says;            /* in the message */
};

static void test_open_refuses_a_damaged_header_naming_the_field(void **state)
{
	struct fixture *f = *state;
	const struct damage cases[] = {
		{ OFF(magic), 0x4e4f4e, 8, -EBADMSG, "bad magic at offset 0x0" },
		{ OFF(version), 2, 4, -ENOTSUP, "unsupported version 2 at offset 0x8" },
		{ OFF(header_size), 64, 4, -EBADMSG, "bad header_size 64 at offset 0xc" },
		{ OFF(chunk_header_size), 48, 4, -EBADMSG, "bad chunk_header_size 48" },
		{ OFF(schema_version), 99, 4, -ENOTSUP, "unsupported schema_version 99" },
		{ OFF(file_size), 1ull << 40, 8, -EBADMSG, "truncated" },
		{ OFF(chunk_size), 100, 4, -EBADMSG, "bad chunk_size 100" },
		{ OFF(nchunks), 0, 4, -EBADMSG, "bad nchunks 0" },
		{ OFF(nchunks), 1000, 4, -EBADMSG, "bad chunk_table_offset" },
		{ OFF(chunk_table_offset), 4, 8, -EBADMSG, "bad chunk_table_offset 0x4" },
		{ OFF(data_offset), FILE_SIZE, 8, -EBADMSG, "bad data_offset" },
	};

	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		struct argus_rb *rb = create(f), *bad = NULL;
		int fd;

		argus_rb_close(rb);
		fd = open(f->path, O_WRONLY);
		assert_true(fd >= 0);
		assert_int_equal(pwrite(fd, &cases[k].value, cases[k].width, cases[k].offset), cases[k].width);
		close(fd);
		assert_int_equal(argus_rb_open(f->path, 0, &bad), cases[k].err);
		if (!strstr(argus_rb_error(bad), cases[k].says))
			fail_msg("case %zu: \"%s\" does not say \"%s\"", k, argus_rb_error(bad), cases[k].says);
		argus_rb_close(bad);
		unlink(f->path);
	}
}

/* ---- the bounds-checked accessor -------------------------------------------- */

static void test_chunk_accessor_refuses_everything_outside_the_data_area(void **state)
{
	struct fixture *f = *state;
	struct argus_rb *rb = create(f);
	uint32_t n = rb->nchunks;
	uint8_t *data = rb->map + rb->data_offset;

	assert_ptr_equal(argus_rb_chunk_data(rb, 0, 0, CHUNK), data);
	assert_ptr_equal(argus_rb_chunk_data(rb, n - 1, CHUNK - 8, 8), data + (uint64_t)n * CHUNK - 8);
	assert_true(data + (uint64_t)n * CHUNK <= rb->map + rb->map_size);
	assert_ptr_equal(argus_rb_chunk_data(rb, 3, CHUNK, 0), data + 4ull * CHUNK);  /* empty, at the end */
	assert_null(argus_rb_chunk_data(rb, n, 0, 0));                  /* index past the table */
	assert_null(argus_rb_chunk_data(rb, UINT32_MAX, 0, 0));
	assert_null(argus_rb_chunk_data(rb, 0, CHUNK + 1, 0));          /* offset past the chunk */
	assert_null(argus_rb_chunk_data(rb, 0, CHUNK, 1));
	assert_null(argus_rb_chunk_data(rb, 0, 8, CHUNK - 7));          /* length past the chunk */
	assert_null(argus_rb_chunk_data(rb, 0, UINT32_MAX, 2));         /* offset + length would wrap */
	assert_null(argus_rb_chunk_data(rb, 0, 1, UINT32_MAX));
	assert_ptr_equal(chunk_header(rb, n - 1), &rb->chunks[n - 1]);
	assert_null(chunk_header(rb, n));
	argus_rb_close(rb);
}

/* ---- wrap-around and accounting --------------------------------------------- */

static void test_wrap_keeps_the_newest_records_in_order_and_counts_the_rest(void **state)
{
	struct fixture *f = *state;
	struct argus_rb *rb = create(f);
	struct argus_rb_producer p;
	struct argus_rb_stats st;
	struct seen *s = calloc(1, sizeof(*s));
	const uint64_t total = 5000;                /* ~5 laps of 15 chunks */
	uint64_t torn = 1, bytes = 0;

	assert_non_null(s);
	argus_rb_producer_init(rb, &p, 1);
	write_records(&p, 0, total);
	argus_rb_producer_close(&p);
	for (uint64_t seq = 0; seq < total; seq++)
		bytes += size_of(seq);

	assert_int_equal(argus_rb_read(rb, collect, s, &torn), 0);
	assert_int_equal(torn, 0);
	assert_int_equal(s->bad, 0);
	assert_true(s->n > 0 && s->seq[0] > 0);                 /* the oldest are gone */
	assert_int_equal(s->seq[s->n - 1], total - 1);          /* the newest are all there */
	for (uint64_t i = 1; i < s->n; i++) {
		assert_int_equal(s->seq[i], s->seq[i - 1] + 1);
		assert_true(s->chunk_seq[i] >= s->chunk_seq[i - 1]);
	}
	assert_int_equal(argus_rb_stats(rb, &st), 0);
	assert_int_equal(st.records_written, total);
	assert_int_equal(st.bytes_written, bytes);
	assert_int_equal(st.records_present, s->n);
	assert_int_equal(st.records_present + st.records_overwritten, st.records_written);
	assert_int_equal(st.chunks_in_use, rb->nchunks);
	assert_true(st.chunks_overwritten > rb->nchunks);
	/* one producer, nothing skipped: every chunk taken past the first lap overwrote one */
	assert_int_equal(st.chunks_skipped, 0);
	assert_int_equal(argus_rb_header(rb)->next_seq, st.chunks_overwritten + rb->nchunks);
	assert_int_equal(st.first_ts, 1000 + s->seq[0] * 10);
	assert_int_equal(st.last_ts, 1000 + (total - 1) * 10);
	free(s);
	argus_rb_close(rb);
}

struct split {
	struct seen in, out;
	uint64_t since, until;
};

static int window_in(const void *rec, uint32_t size, uint64_t chunk_seq, void *ctx)
{
	return collect(rec, size, chunk_seq, &((struct split *)ctx)->in);
}

static int window_out(const void *rec, uint32_t size, uint64_t chunk_seq, void *ctx)
{
	return collect(rec, size, chunk_seq, &((struct split *)ctx)->out);
}

static void test_window_read_gives_every_record_in_the_window_to_fn(void **state)
{
	struct fixture *f = *state;
	struct argus_rb *rb = create(f);
	struct argus_rb_producer p;
	struct split *w = calloc(1, sizeof(*w));
	struct seen *all = calloc(1, sizeof(*all));
	struct argus_rb_torn torn;
	uint64_t in_window = 0, i, j, k;

	assert_non_null(w);
	assert_non_null(all);
	argus_rb_producer_init(rb, &p, 1);
	write_records(&p, 0, 600);                  /* ~9 chunks, no wrap */
	argus_rb_producer_close(&p);
	w->since = 1000 + 200 * 10;
	w->until = 1000 + 260 * 10;
	assert_int_equal(argus_rb_read(rb, collect, all, NULL), 0);
	assert_int_equal(argus_rb_read_window(rb, w->since, w->until, window_in, window_out, w, &torn), 0);
	assert_int_equal(torn.chunks, 0);
	/* fn got whole chunks around the window, outside_fn the rest: together a full read, in order */
	assert_int_equal(w->in.n + w->out.n, all->n);
	assert_true(w->in.n < all->n);
	for (i = j = k = 0; k < all->n; k++) {
		uint64_t seq = all->seq[k];
		uint64_t ts = 1000 + seq * 10;

		if (i < w->in.n && w->in.seq[i] == seq)
			i++;
		else if (j < w->out.n && w->out.seq[j] == seq)
			j++;
		else
			fail_msg("record %llu missing or out of order", (unsigned long long)seq);
		if (ts >= w->since && ts <= w->until) {
			in_window++;
			assert_int_equal(w->in.seq[i - 1], seq);    /* a record in the window went to fn */
		}
	}
	assert_int_equal(in_window, 61);
	free(w);
	free(all);
	argus_rb_close(rb);
}

/* ---- damaged chunks and frames ---------------------------------------------- */

static void test_chunk_claiming_too_many_bytes_is_dropped_with_its_time_range(void **state)
{
	struct fixture *f = *state;
	struct argus_rb *rb = create(f);
	struct argus_rb_producer p;
	struct argus_rb_chunk_header *c;
	struct argus_rb_stats before, after;
	struct argus_rb_torn torn;
	struct seen *s = calloc(1, sizeof(*s));
	uint64_t first, last;
	uint32_t nrecords;

	assert_non_null(s);
	argus_rb_producer_init(rb, &p, 1);
	write_records(&p, 0, 200);                  /* three chunks */
	argus_rb_producer_close(&p);
	assert_int_equal(argus_rb_stats(rb, &before), 0);
	c = chunk_header(rb, 1);
	first = c->first_ts;
	last = c->last_ts;
	nrecords = c->nrecords;
	*commit_word(c) = commit_make(CHUNK + 8, nrecords);

	assert_int_equal(argus_rb_read_window(rb, 0, UINT64_MAX, collect, NULL, s, &torn), 0);
	assert_int_equal(torn.chunks, 1);
	assert_int_equal(torn.first_ts, first);
	assert_int_equal(torn.last_ts, last);
	assert_int_equal(s->bad, 0);
	assert_int_equal(s->n, 200 - nrecords);
	for (uint64_t i = 0; i < s->n; i++) {
		uint64_t ts = 1000 + s->seq[i] * 10;

		assert_true(ts < first || ts > last);    /* every record but the dropped chunk's */
	}
	assert_int_equal(argus_rb_stats(rb, &after), 0);
	assert_int_equal(after.chunks_in_use, before.chunks_in_use - 1);
	assert_int_equal(after.records_present, before.records_present - nrecords);
	free(s);
	argus_rb_close(rb);
}

/* seq == UINT64_MAX with records committed (a taker that died mid-reset, or
 * a damaged file): the chunk is lost to the read and says so. */
static void test_chunk_stuck_in_reset_is_counted_torn(void **state)
{
	struct fixture *f = *state;
	struct argus_rb *rb = create(f);
	struct argus_rb_producer p;
	struct argus_rb_chunk_header *c;
	struct argus_rb_torn torn;
	struct seen *s = calloc(1, sizeof(*s));
	uint32_t nrecords;

	assert_non_null(s);
	argus_rb_producer_init(rb, &p, 1);
	write_records(&p, 0, 200);                  /* three chunks */
	argus_rb_producer_close(&p);
	c = chunk_header(rb, 1);
	nrecords = c->nrecords;
	c->seq = UINT64_MAX;

	assert_int_equal(argus_rb_read_window(rb, 0, UINT64_MAX, collect, NULL, s, &torn), 0);
	assert_int_equal(torn.chunks, 1);
	assert_int_equal(torn.first_ts, c->first_ts);
	assert_int_equal(torn.last_ts, c->last_ts);
	assert_int_equal(s->n, 200 - nrecords);
	free(s);
	argus_rb_close(rb);
}

static void test_malformed_frame_is_passed_once_and_ends_only_its_chunk(void **state)
{
	struct fixture *f = *state;
	struct argus_rb *rb = create(f);
	struct argus_rb_producer p;
	struct seen *s = calloc(1, sizeof(*s));
	uint16_t bad_size = 13;
	uint8_t *rec2;
	uint32_t off2 = size_of(0) + size_of(1), committed;

	assert_non_null(s);
	argus_rb_producer_init(rb, &p, 1);
	write_records(&p, 0, 6);                    /* chunk seq 0 */
	argus_rb_producer_close(&p);
	argus_rb_producer_init(rb, &p, 1);
	write_records(&p, 6, 9);                    /* chunk seq 1 */
	argus_rb_producer_close(&p);
	committed = chunk_header(rb, 0)->committed_bytes;
	rec2 = argus_rb_chunk_data(rb, 0, off2, sizeof(struct argus_event_header));
	assert_non_null(rec2);
	memcpy(rec2 + offsetof(struct argus_event_header, size), &bad_size, sizeof(bad_size));

	assert_int_equal(argus_rb_read(rb, collect, s, NULL), 0);
	assert_int_equal(s->bad, 1);                /* once, with every byte left in the chunk */
	assert_int_equal(s->bad_size[0], committed - off2);
	assert_int_equal(s->bad_chunk[0], 0);
	assert_int_equal(s->n, 5);                  /* 0, 1, then the next chunk: 6, 7, 8 */
	assert_int_equal(s->seq[0], 0);
	assert_int_equal(s->seq[1], 1);
	assert_int_equal(s->seq[2], 6);
	assert_int_equal(s->seq[4], 8);
	assert_int_equal(s->chunk_seq[2], 1);
	free(s);
	argus_rb_close(rb);
}

static void test_write_refuses_bad_frames_and_read_only_handles(void **state)
{
	struct fixture *f = *state;
	struct argus_rb *rb = create(f), *ro = NULL;
	struct argus_rb_producer p;
	uint8_t buf[ARGUS_EVENT_MAX_SIZE + 16];

	argus_rb_producer_init(rb, &p, 1);
	make_rec(buf, 0, 1, 40);
	assert_int_equal(argus_rb_write(&p, buf, 16), -EINVAL);     /* shorter than a header */
	assert_int_equal(argus_rb_write(&p, buf, 44), -EINVAL);     /* not a multiple of 8 */
	assert_int_equal(argus_rb_write(&p, buf, 48), -EINVAL);     /* its size field says 40 */
	make_rec(buf, 0, 1, ARGUS_EVENT_MAX_SIZE + 8);
	assert_int_equal(argus_rb_write(&p, buf, ARGUS_EVENT_MAX_SIZE + 8), -EINVAL);
	assert_int_equal(p.chunk_index, UINT32_MAX);               /* no chunk was taken */
	assert_int_equal(argus_rb_header(rb)->next_seq, 0);
	argus_rb_producer_close(&p);
	assert_int_equal(argus_rb_open(f->path, 0, &ro), 0);
	argus_rb_producer_init(ro, &p, 1);
	make_rec(buf, 0, 1, 40);
	assert_int_equal(argus_rb_write(&p, buf, 40), -EBADF);
	assert_non_null(strstr(argus_rb_error(ro), "read-only"));
	argus_rb_close(ro);
	argus_rb_close(rb);
}

/* ---- a reader racing a writer ------------------------------------------------- */

struct race {
	struct argus_rb *rb;
	int stop, failed;
	uint64_t written;            /* published as the writer goes */
};

static void *lap_the_ring(void *arg)
{
	struct race *r = arg;
	struct argus_rb_producer p;
	uint8_t buf[ARGUS_EVENT_MAX_SIZE];
	uint64_t seq;

	argus_rb_producer_init(r->rb, &p, 1);
	for (seq = 0; !__atomic_load_n(&r->stop, __ATOMIC_RELAXED); seq++) {
		make_rec(buf, seq, 1000 + seq, size_of(seq));
		if (argus_rb_write(&p, buf, size_of(seq))) {
			__atomic_store_n(&r->failed, 1, __ATOMIC_RELAXED);
			break;
		}
		__atomic_store_n(&r->written, seq + 1, __ATOMIC_RELAXED);
	}
	argus_rb_producer_close(&p);
	return NULL;
}

static void test_reader_racing_a_lapping_writer_sees_only_intact_records(void **state)
{
	struct fixture *f = *state;
	struct race r = { .rb = create(f) };
	struct argus_rb *ro = NULL;
	struct seen *s = malloc(sizeof(*s));
	uint64_t delivered = 0, torn_total = 0, torn, reads, raced = 0, before;
	pthread_t writer;

	assert_non_null(s);
	assert_int_equal(argus_rb_open(f->path, 0, &ro), 0);
	assert_int_equal(pthread_create(&writer, NULL, lap_the_ring, &r), 0);
	while (!__atomic_load_n(&r.written, __ATOMIC_RELAXED) && !__atomic_load_n(&r.failed, __ATOMIC_RELAXED))
		sched_yield();                          /* the writer is under way */
	/* on until 300 reads overlapped the writer's progress and it lapped the ring ~20 times */
	for (reads = 0; (raced < 300 || __atomic_load_n(&r.written, __ATOMIC_RELAXED) < 20000) &&
			!__atomic_load_n(&r.failed, __ATOMIC_RELAXED); reads++) {
		s->n = s->bad = 0;
		before = __atomic_load_n(&r.written, __ATOMIC_RELAXED);
		assert_int_equal(argus_rb_read(ro, collect, s, &torn), 0);
		raced += __atomic_load_n(&r.written, __ATOMIC_RELAXED) != before;
		assert_int_equal(s->bad, 0);                        /* nothing torn got through */
		for (uint64_t i = 1; i < s->n; i++)
			assert_true(s->seq[i] > s->seq[i - 1]);     /* one producer: seq order */
		delivered += s->n;
		torn_total += torn;
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	pthread_join(writer, NULL);
	assert_int_equal(r.failed, 0);
	assert_true(r.written >= 20000);
	print_message("  %llu records written, %llu delivered intact over %llu reads (%llu during writes), "
		      "%llu chunks torn\n", (unsigned long long)r.written, (unsigned long long)delivered,
		      (unsigned long long)reads, (unsigned long long)raced, (unsigned long long)torn_total);
	free(s);
	argus_rb_close(ro);
	argus_rb_close(r.rb);
}

/* ---- a producer that died holding a chunk ------------------------------------- */

static void test_dead_producers_records_stay_readable_and_are_counted(void **state)
{
	struct fixture *f = *state;
	struct argus_rb *rb = create(f);
	struct argus_rb_producer p;
	struct argus_rb_stats st;
	struct seen *s = calloc(1, sizeof(*s));
	int status;
	pid_t child;

	assert_non_null(s);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct argus_rb *mine = NULL;
		uint8_t buf[ARGUS_EVENT_MAX_SIZE];

		if (argus_rb_open(f->path, 1, &mine))
			_exit(1);
		argus_rb_producer_init(mine, &p, 2);
		for (uint64_t seq = 0; seq < 3; seq++) {
			make_rec(buf, seq, 1000 + seq * 10, size_of(seq));
			if (argus_rb_write(&p, buf, size_of(seq)))
				_exit(1);
		}
		_exit(0);                               /* dies holding its chunk OPEN */
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(owner_state(*ownership(chunk_header(rb, 0))), ARGUS_RB_CHUNK_OPEN);
	assert_int_equal(argus_rb_stats(rb, &st), 0);
	assert_int_equal(st.records_present, 3);
	assert_int_equal(st.records_written, 3);    /* credited from the OPEN chunk */
	assert_int_equal(argus_rb_read(rb, collect, s, NULL), 0);
	assert_int_equal(s->n, 3);

	argus_rb_producer_init(rb, &p, 1);
	write_records(&p, 3, 3000);                 /* laps the ring: takes the dead chunk back */
	argus_rb_producer_close(&p);
	assert_int_equal(argus_rb_stats(rb, &st), 0);
	assert_int_equal(st.records_written, 3000);
	assert_int_equal(st.records_present + st.records_overwritten, 3000);
	assert_int_equal(st.chunks_skipped, 0);
	free(s);
	argus_rb_close(rb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_header_describes_the_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_refuses_a_damaged_header_naming_the_field, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunk_accessor_refuses_everything_outside_the_data_area, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_wrap_keeps_the_newest_records_in_order_and_counts_the_rest, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_window_read_gives_every_record_in_the_window_to_fn, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_chunk_claiming_too_many_bytes_is_dropped_with_its_time_range,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunk_stuck_in_reset_is_counted_torn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_frame_is_passed_once_and_ends_only_its_chunk, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_write_refuses_bad_frames_and_read_only_handles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_racing_a_lapping_writer_sees_only_intact_records, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dead_producers_records_stay_readable_and_are_counted, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
