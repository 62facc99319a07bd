/* SPDX-License-Identifier: Apache-2.0 */
/*
 * argus-rb-stress: drives the ring buffer through its public C API for the
 * tests in tracer/ringbuf_test.py (threads, processes, kill -9, readers
 * racing writers) and for quick benchmarks.
 *
 *   create PATH SIZE CHUNK                      new buffer (sizes take k/m/g)
 *   produce PATH [--threads N] [--records M] [--producer-id K] [--size S]
 *                                               N threads x M records, then
 *                                               seal; prints a JSON summary
 *   produce-forever PATH [--producer-id K] [--size S] [--batch B] [--batch-sleep-us U]
 *                                               one thread until killed; after
 *                                               each batch prints the number of
 *                                               records committed so far
 *   stats PATH                                  argus_rb_stats as JSON
 *   decode PATH                                 argus_decode_file summary as JSON
 *
 * Every record is an ARGUS_EV_SYSCALL_ENTER (padded to S bytes) whose payload
 * says exactly who wrote it, so a test can account for every record:
 *   nr = producer id, aux = thread index, obj = per-thread sequence number
 *   (0, 1, 2, ...), obj2 = record_check(producer, thread, seq).
 * Records are written in sequence order, so "committed N" means sequence
 * numbers 0..N-1 of that thread are in the file.
 */
#include "argus_decode.h"
#include "argus_event.h"
#include "argus_rb.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* splitmix64 finalizer; mirrored by record_check() in ringbuf_test.py. */
static uint64_t record_check(uint32_t producer, uint32_t thread, uint64_t seq)
{
	uint64_t z = ((uint64_t)producer << 48) ^ ((uint64_t)thread << 32) ^ seq;

	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct record_buf {
	union {
		struct argus_ev_syscall_enter ev;
		uint8_t bytes[ARGUS_EVENT_MAX_SIZE];
	};
	uint32_t size;
};

static void record_init(struct record_buf *r, uint32_t size, uint32_t producer, uint32_t thread)
{
	memset(r->bytes, 0xa5, sizeof r->bytes);  /* padding beyond the v1 payload */
	r->size = size;
	r->ev.h.pid = (uint32_t)getpid();
	r->ev.h.tid = (uint32_t)gettid();
	r->ev.h.type = ARGUS_EV_SYSCALL_ENTER;
	r->ev.h.size = (uint16_t)size;
	r->ev.h.flags = 0;
	r->ev.nr = producer;
	r->ev.aux = (int32_t)thread;
}

static int record_write(struct argus_rb_producer *p, struct record_buf *r, uint64_t seq)
{
	int cpu = sched_getcpu();

	r->ev.h.ts_ns = monotonic_ns();
	r->ev.h.cpu = cpu < 0 ? 0 : (uint16_t)cpu;
	r->ev.obj = seq;
	r->ev.obj2 = record_check(r->ev.nr, (uint32_t)r->ev.aux, seq);
	return argus_rb_write(p, r->bytes, r->size);
}

/* ---- options ---------------------------------------------------------------- */

struct options {
	const char *path;
	uint64_t threads, records, producer_id, size, batch, batch_sleep_us;
};

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct { const char *name; size_t field; } flags[] = {
		{ "--threads", offsetof(struct options, threads) },
		{ "--records", offsetof(struct options, records) },
		{ "--producer-id", offsetof(struct options, producer_id) },
		{ "--size", offsetof(struct options, size) },
		{ "--batch", offsetof(struct options, batch) },
		{ "--batch-sleep-us", offsetof(struct options, batch_sleep_us) },
	};

	*o = (struct options){ .threads = 1, .records = 100000, .size = sizeof(struct argus_ev_syscall_enter), .batch = 1000 };
	for (int i = 0; i < argc; i++) {
		size_t f;

		for (f = 0; f < sizeof flags / sizeof flags[0]; f++)
			if (strcmp(argv[i], flags[f].name) == 0)
				break;
		if (f == sizeof flags / sizeof flags[0]) {
			if (argv[i][0] == '-' || o->path) {
				fprintf(stderr, "rb_stress: unexpected argument %s\n", argv[i]);
				return -1;
			}
			o->path = argv[i];
			continue;
		}
		if (i + 1 >= argc || parse_u64(argv[i + 1], (uint64_t *)((char *)o + flags[f].field)) < 0) {
			fprintf(stderr, "rb_stress: %s needs a number\n", argv[i]);
			return -1;
		}
		i++;
	}
	if (!o->path) {
		fprintf(stderr, "rb_stress: missing PATH\n");
		return -1;
	}
	if (o->size < sizeof(struct argus_ev_syscall_enter) || o->size > ARGUS_EVENT_MAX_SIZE || o->size % 8) {
		fprintf(stderr, "rb_stress: --size must be a multiple of 8 in [%zu, %d]\n",
			sizeof(struct argus_ev_syscall_enter), ARGUS_EVENT_MAX_SIZE);
		return -1;
	}
	if (o->threads < 1 || o->batch < 1) {
		fprintf(stderr, "rb_stress: --threads and --batch must be >= 1\n");
		return -1;
	}
	return 0;
}

static struct argus_rb *open_or_die(const char *path, int writable)
{
	struct argus_rb *rb;

	if (argus_rb_open(path, writable, &rb) < 0) {
		fprintf(stderr, "rb_stress: %s\n", argus_rb_error(rb));
		argus_rb_close(rb);
		exit(1);
	}
	return rb;
}

/* ---- subcommands ------------------------------------------------------------ */

static int cmd_create(int argc, char **argv)
{
	uint64_t size, chunk;
	struct argus_rb *rb;
	int rc;

	if (argc != 3 || parse_u64(argv[1], &size) < 0 || parse_u64(argv[2], &chunk) < 0 || chunk > UINT32_MAX) {
		fprintf(stderr, "usage: rb_stress create PATH SIZE CHUNK\n");
		return 2;
	}
	rc = argus_rb_create(argv[0], size, (uint32_t)chunk, &rb);
	if (rc < 0)
		fprintf(stderr, "rb_stress: %s\n", argus_rb_error(rb));
	argus_rb_close(rb);
	return rc < 0;
}

struct producer_thread {
	pthread_t thread;
	struct argus_rb *rb;
	const struct options *opt;
	uint32_t index;
	uint64_t committed;
	int error;
};

static void *produce_thread(void *arg)
{
	struct producer_thread *t = arg;
	struct argus_rb_producer p;
	struct record_buf r;

	argus_rb_producer_init(t->rb, &p, (uint32_t)t->opt->producer_id);
	record_init(&r, (uint32_t)t->opt->size, (uint32_t)t->opt->producer_id, t->index);
	for (uint64_t seq = 0; seq < t->opt->records; seq++) {
		t->error = record_write(&p, &r, seq);
		if (t->error) {
			fprintf(stderr, "rb_stress: thread %u: %s\n", t->index, argus_rb_error(t->rb));
			break;
		}
		t->committed++;
	}
	argus_rb_producer_close(&p);
	return NULL;
}

static int cmd_produce(int argc, char **argv)
{
	struct options o;
	struct producer_thread *threads;
	struct argus_rb *rb;
	uint64_t committed = 0;
	int failed = 0;

	if (parse_options(argc, argv, &o) < 0)
		return 2;
	rb = open_or_die(o.path, 1);
	threads = calloc(o.threads, sizeof *threads);
	if (!threads)
		return 1;
	for (uint64_t i = 0; i < o.threads; i++) {
		threads[i] = (struct producer_thread){ .rb = rb, .opt = &o, .index = (uint32_t)i };
		if (pthread_create(&threads[i].thread, NULL, produce_thread, &threads[i]) != 0) {
			fprintf(stderr, "rb_stress: pthread_create failed\n");
			return 1;
		}
	}
	for (uint64_t i = 0; i < o.threads; i++) {
		pthread_join(threads[i].thread, NULL);
		committed += threads[i].committed;
		failed |= threads[i].error != 0;
	}
	printf("{\"producer_id\": %" PRIu64 ", \"threads\": %" PRIu64 ", \"records_per_thread\": %" PRIu64
	       ", \"committed\": %" PRIu64 ", \"pid\": %d}\n",
	       o.producer_id, o.threads, o.records, committed, (int)getpid());
	free(threads);
	argus_rb_close(rb);
	return failed;
}

static int cmd_produce_forever(int argc, char **argv)
{
	struct options o;
	struct argus_rb_producer p;
	struct record_buf r;
	struct argus_rb *rb;
	uint64_t seq = 0;

	if (parse_options(argc, argv, &o) < 0)
		return 2;
	rb = open_or_die(o.path, 1);
	argus_rb_producer_init(rb, &p, (uint32_t)o.producer_id);
	record_init(&r, (uint32_t)o.size, (uint32_t)o.producer_id, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (;;) {
		for (uint64_t i = 0; i < o.batch; i++, seq++) {
			if (record_write(&p, &r, seq) < 0) {
				fprintf(stderr, "rb_stress: %s\n", argus_rb_error(rb));
				return 1;
			}
		}
		printf("%" PRIu64 "\n", seq);
		if (o.batch_sleep_us)
			usleep((useconds_t)o.batch_sleep_us);
	}
}

static int cmd_stats(int argc, char **argv)
{
	struct argus_rb_stats s;
	struct argus_rb *rb;

	if (argc != 1) {
		fprintf(stderr, "usage: rb_stress stats PATH\n");
		return 2;
	}
	rb = open_or_die(argv[0], 0);
	argus_rb_stats(rb, &s);
#define U(f) "\"" #f "\": %" PRIu64
	printf("{" U(file_size) ", " U(chunk_size) ", " U(nchunks) ", " U(records_written) ", "
	       U(bytes_written) ", " U(records_overwritten) ", " U(chunks_overwritten) ", "
	       U(records_lost) ", " U(chunks_skipped) ", " U(chunks_in_use) ", " U(records_present) ", "
	       U(bytes_present) ", " U(first_ts) ", " U(last_ts) ", " U(created_ns) ", "
	       U(created_realtime_ns) ", \"daemon_pid\": %u}\n",
	       s.file_size, s.chunk_size, s.nchunks, s.records_written, s.bytes_written,
	       s.records_overwritten, s.chunks_overwritten, s.records_lost, s.chunks_skipped,
	       s.chunks_in_use, s.records_present, s.bytes_present, s.first_ts, s.last_ts,
	       s.created_ns, s.created_realtime_ns, s.daemon_pid);
#undef U
	argus_rb_close(rb);
	return 0;
}

static int cmd_decode(int argc, char **argv)
{
	struct argus_decode_result res;
	uint64_t t0 = monotonic_ns(), elapsed;
	int rc;

	if (argc != 1) {
		fprintf(stderr, "usage: rb_stress decode PATH\n");
		return 2;
	}
	rc = argus_decode_file(argv[0], &res);
	elapsed = monotonic_ns() - t0;
	if (rc < 0) {
		fprintf(stderr, "rb_stress: %s\n", res.error);
		return 1;
	}
	printf("{\"rows\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"torn_chunks\": %" PRIu64
	       ", \"bad_records\": %" PRIu64 ", \"unknown_records\": %" PRIu64
	       ", \"records_overwritten\": %" PRIu64 ", \"seconds\": %.3f, \"rows_per_second\": %.0f}\n",
	       res.nrows, res.bytes, res.torn_chunks, res.bad_records, res.unknown_records,
	       res.records_overwritten, elapsed / 1e9, elapsed ? res.nrows * 1e9 / elapsed : 0.0);
	argus_decode_free(&res);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int (*run)(int, char **); } commands[] = {
		{ "create", cmd_create },
		{ "produce", cmd_produce },
		{ "produce-forever", cmd_produce_forever },
		{ "stats", cmd_stats },
		{ "decode", cmd_decode },
	};

	for (size_t i = 0; argc >= 2 && i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 2, argv + 2);
	fprintf(stderr, "usage: rb_stress {create|produce|produce-forever|stats|decode} PATH ...\n");
	return 2;
}
