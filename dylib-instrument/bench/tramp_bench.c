/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cost of one recorded call of bench_target, by configuration:
 *   plain     no probe: the empty-call baseline
 *   tramp     trampoline, entry record into a per-thread ring large enough
 *             for every record (drained after the timing): what the traced
 *             thread pays
 *   tramp_ret trampoline, entry and return records, likewise
 *   tramp_drained  as tramp, with a consumer thread draining meanwhile as
 *             argusd would (on a busy 2-CPU machine the two share cache
 *             lines and CPUs: an upper bound)
 *   uprobe    uprobe + BPF program writing the same 48-byte record into a
 *             BPF ring buffer (uprobe_record.bpf.o beside this program),
 *             drained by a consumer thread
 * Records that did not arrive are reported as lost.  Times are the calling
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
 *
 *   argus-tramp-bench MODE CALLS RING_DIR
 * Prints one JSON line: mode, calls, ns_per_call, records, lost.
 */
#include "../hook.h"
#include "../probe_record.h"
#include "../recorder.h"
#include "../uring.h"

#include <bpf/libbpf.h>
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern long bench_target(long);

static volatile int stop_consumer;
static long records;
static const char *ring_dir;

static void count(const struct argus_event_header *rec, void *arg)
{
	records++;
}

/* The (one) ring of the measuring thread, once it exists. */
static void open_the_ring(struct argus_uring *r)
{
	DIR *d = opendir(ring_dir);
	struct dirent *de;
	while (d && (de = readdir(d)) && !r->hdr) {
		char path[PATH_MAX];
		if (!strstr(de->d_name, ".ring"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", ring_dir, de->d_name);
		argus_uring_open(r, path);
	}
	if (d)
		closedir(d);
}

static uint64_t drain_until_stopped(void)
{
	struct argus_uring r = {0};
	int last = 0;
	while (!last) {
		last = stop_consumer;
		if (!r.hdr)
			open_the_ring(&r);
		if (r.hdr)
			argus_uring_drain(&r, count, NULL);
	}
	uint64_t lost = r.hdr ? r.hdr->lost : 0;
	argus_uring_unmap(&r);
	return lost;
}

static void *drain_thread(void *arg)
{
	*(uint64_t *)arg = drain_until_stopped();
	return NULL;
}

static int handle_bpf_record(void *ctx, void *data, size_t size)
{
	records++;
	return 0;
}

static void *drain_bpf(void *arg)
{
	struct ring_buffer *rb = arg;
	while (!stop_consumer)
		ring_buffer__poll(rb, 10);
	ring_buffer__consume(rb);
	return NULL;
}

/* CPU time of this thread (user + kernel on its behalf, so a uprobe's trap
 * and BPF program count): on a shared machine wall time mostly measures
 * the other tenants. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double time_calls(long calls)
{
	long sum = 0;
	uint64_t t0 = thread_cpu_ns();
	for (long i = 0; i < calls; i++)
		sum += bench_target(i);
	uint64_t t1 = thread_cpu_ns();
	if (sum == 42)   /* keeps the loop */
		puts("");
	return (double)(t1 - t0) / (double)calls;
}

static int run_uprobe(long calls, double *ns, uint64_t *lost)
{
	char exe[PATH_MAX], obj_path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	snprintf(obj_path, sizeof(obj_path), "%.*s/uprobe_record.bpf.o", (int)(strrchr(exe, '/') - exe), exe);
	struct bpf_object *obj = bpf_object__open_file(obj_path, NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "tramp-bench: failed to load %s\n", obj_path);
		return -1;
	}
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, "record_entry");
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "bench_target");
	struct bpf_link *link = bpf_program__attach_uprobe_opts(prog, getpid(), exe, 0, &uo);
	if (!link) {
		fprintf(stderr, "tramp-bench: failed to attach the uprobe to bench_target\n");
		return -1;
	}
	struct ring_buffer *rb = ring_buffer__new(bpf_object__find_map_fd_by_name(obj, "events"),
						  handle_bpf_record, NULL, NULL);
	pthread_t th;
	pthread_create(&th, NULL, drain_bpf, rb);
	*ns = time_calls(calls);
	stop_consumer = 1;
	pthread_join(th, NULL);
	*lost = (uint64_t)(calls - records);   /* ringbuf drops are silent: what did not arrive */
	ring_buffer__free(rb);
	bpf_link__destroy(link);
	bpf_object__close(obj);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s plain|tramp|tramp_ret|tramp_drained|uprobe CALLS RING_DIR\n", argv[0]);
		return 2;
	}
	const char *mode = argv[1];
	long calls = atol(argv[2]);
	ring_dir = argv[3];
	double ns = 0;
	uint64_t lost = 0;
	time_calls(calls / 10 + 1);   /* warm up: page in, settle the frequency */
	if (strcmp(mode, "plain") == 0) {
		ns = time_calls(calls);
	} else if (strncmp(mode, "tramp", 5) == 0) {
		int with_return = strcmp(mode, "tramp_ret") == 0, drained = strcmp(mode, "tramp_drained") == 0;
		struct argus_hook h;
		struct argus_hook_spec spec = {.probe_id = 1, .enter_type = ARGUS_EV_CALLBACK_BEGIN,
					       .return_type = with_return ? ARGUS_EV_CALLBACK_END : 0};
		uint64_t need = (uint64_t)(calls + 1) * (with_return ? 2 : 1) * sizeof(struct argus_ev_probe);
		uint32_t ring = 1u << 20;
		if (drained)
			ring = 1u << 22;   /* 4 MiB, as an agent ring might be */
		while (!drained && ring < need && ring < (1u << 31))
			ring <<= 1;
		if (argus_recorder_init(ring_dir, ring) || argus_hook_install((void *)bench_target, &spec, &h)) {
			fprintf(stderr, "tramp-bench: failed to hook bench_target\n");
			return 1;
		}
		bench_target(0);   /* the first record creates (and prefaults) the ring */
		pthread_t th;
		if (drained)
			pthread_create(&th, NULL, drain_thread, &lost);
		ns = time_calls(calls);
		argus_recorder_thread_done();
		stop_consumer = 1;
		if (drained)
			pthread_join(th, NULL);
		else
			lost = drain_until_stopped();
		records -= 1 + with_return;   /* the ring-creating call */
	} else if (strcmp(mode, "uprobe") == 0) {
		if (run_uprobe(calls, &ns, &lost))
			return 1;
	} else {
		fprintf(stderr, "tramp-bench: unknown mode %s\n", mode);
		return 2;
	}
	printf("{\"mode\": \"%s\", \"calls\": %ld, \"ns_per_call\": %.2f, \"records\": %ld, \"lost\": %llu}\n",
	       mode, calls, ns, records, (unsigned long long)lost);
	return 0;
}
