/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hooks on real code (hook_test_targets_x86_64.S), run for real:
 *   - hookable prologues (frame, RIP-relative load, short jcc, call) keep
 *     their results under 4 threads, with entry and return records in each
 *     thread's ring, in time order, with the thread's pid/tid;
 *   - refused prologues (too short, jrcxz out, branch back into the patch)
 *     return the expected error and leave the function's bytes untouched;
 *   - the first record of a thread (ring creation, libc calls) keeps errno
 *     and a double argument in xmm0;
 *   - removal restores the bytes and stops the records.
 * Prints one line per check and "N passed, N failed"; exit 1 on failure.
 *
 *   argus-hook-test RING_DIR
 */
#include "hook.h"
#include "probe_record.h"
#include "recorder.h"
#include "reloc.h"
#include "uring.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern long fn_plain(long), fn_rip(long), fn_branch(long), fn_tiny(void), fn_jrcxz(long, long, long, long),
	fn_loop_back(long), fn_call(long);
extern double fn_double(double);
extern char fn_plain_end[], fn_rip_end[], fn_loop_back_end[];

#define THREADS 4
#define CALLS 5000   /* 9 records a call: 2.2 MB per thread, rings of 4 MiB, no loss */

static int passed, failed;

static void check(int ok, const char *what)
{
	printf("%s %s\n", ok ? "ok" : "FAIL", what);
	ok ? passed++ : failed++;
}

enum { P_PLAIN = 1, P_RIP, P_BRANCH, P_CALL, P_DOUBLE, NPROBES };

static long results_wrong;

static void *worker(void *arg)
{
	for (long i = 0; i < CALLS; i++) {
		if (fn_plain(i) != i + 1 || fn_rip(i) != i + 1000 || fn_branch(i) != (i ? 2 * i : 42) ||
		    fn_call(i) != i + 2)
			__atomic_add_fetch(&results_wrong, 1, __ATOMIC_RELAXED);
	}
	argus_recorder_thread_done();
	return NULL;
}

struct tally {
	long enter[NPROBES], ret[NPROBES];
	long bad, lost;
	uint64_t last_ts;
};

static void count_record(const struct argus_event_header *rec, void *arg)
{
	struct tally *t = arg;
	const struct argus_ev_probe *e = (const void *)rec;
	if (rec->size != sizeof(*e) || e->probe_id >= NPROBES || rec->ts_ns < t->last_ts ||
	    rec->pid != (uint32_t)getpid()) {
		t->bad++;
		return;
	}
	t->last_ts = rec->ts_ns;
	if (rec->type == ARGUS_EV_CALLBACK_BEGIN)
		t->enter[e->probe_id]++;
	else if (rec->type == ARGUS_EV_CALLBACK_END)
		t->ret[e->probe_id]++;
	else
		t->bad++;
}

/* Removes the ring files and dir itself (the rings stay mapped: unlink only). */
static void remove_rings(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		if (!strstr(de->d_name, ".ring"))
			continue;
		unlinkat(dirfd(d), de->d_name, 0);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* Drains every ring in dir into tally; returns the number of rings. */
static int drain_dir(const char *dir, struct tally *total)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int rings = 0;
	while (d && (de = readdir(d))) {
		if (!strstr(de->d_name, ".ring"))
			continue;
		char path[600];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		struct argus_uring r;
		if (argus_uring_open(&r, path)) {
			total->bad++;
			continue;
		}
		total->last_ts = 0;   /* order holds within one thread's ring */
		if (argus_uring_drain(&r, count_record, total) < 0)
			total->bad++;
		total->lost += (long)r.hdr->lost;
		argus_uring_unmap(&r);
		rings++;
	}
	if (d)
		closedir(d);
	return rings;
}

static void expect_refused(void *fn, size_t size, int want, const char *what)
{
	uint8_t before[16], after[16];
	memcpy(before, fn, 16);
	struct argus_hook h;
	struct argus_hook_spec spec = {.probe_id = 0, .enter_type = ARGUS_EV_CALLBACK_BEGIN, .fn_size = size};
	int err = argus_hook_install(fn, &spec, &h);
	memcpy(after, fn, 16);
	char msg[160];
	snprintf(msg, sizeof(msg), "%s refused with %s (got %s)", what, argus_reloc_error_name(want),
		 argus_reloc_error_name(err));
	check(err == want && memcmp(before, after, 16) == 0, msg);
}

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--keep"))) {
		fprintf(stderr, "usage: %s PARENT_DIR [--keep]\n", argv[0]);
		return 2;
	}
	/* a directory of this run's own: the ring count below must not see an
	 * earlier run's rings; removed at the end unless --keep (the pytest
	 * driver looks at the files) */
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/hook-test.XXXXXX", argv[1]);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "hook-test: failed to create a ring directory in %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (argus_recorder_init(dir, 1u << 22)) {
		fprintf(stderr, "hook-test: failed to init the recorder in %s\n", dir);
		return 1;
	}

	expect_refused((void *)fn_tiny, 0, ARGUS_ERR_TOO_SHORT, "xor;ret");
	expect_refused((void *)fn_jrcxz, 0, ARGUS_ERR_UNSUPPORTED, "jrcxz out of the prologue");
	expect_refused((void *)fn_loop_back, (size_t)(fn_loop_back_end - (char *)fn_loop_back),
		       ARGUS_ERR_BRANCH_INTO, "loop back into the patch");
	/* fn_jrcxz tests rcx, its 4th argument */
	check(fn_tiny() == 0 && fn_jrcxz(5, 0, 0, 1) == 5 && fn_jrcxz(5, 0, 0, 0) == 7 && fn_loop_back(3) == 6,
	      "refused functions still run");

	static struct argus_hook hooks[NPROBES];
	struct { void *fn; size_t size; int with_return; const char *name; } plan[NPROBES] = {
		[P_PLAIN] = {(void *)fn_plain, (size_t)(fn_plain_end - (char *)fn_plain), 1, "frame prologue"},
		[P_RIP] = {(void *)fn_rip, (size_t)(fn_rip_end - (char *)fn_rip), 0, "RIP-relative prologue"},
		[P_BRANCH] = {(void *)fn_branch, 0, 1, "short jcc prologue"},
		[P_CALL] = {(void *)fn_call, 0, 1, "call in the prologue"},
		[P_DOUBLE] = {(void *)fn_double, 0, 1, "double argument in xmm0"},
	};
	for (int p = 1; p < NPROBES; p++) {
		struct argus_hook_spec spec = {
			.probe_id = (uint32_t)p, .enter_type = ARGUS_EV_CALLBACK_BEGIN,
			.return_type = plan[p].with_return ? ARGUS_EV_CALLBACK_END : 0, .fn_size = plan[p].size,
		};
		int err = argus_hook_install(plan[p].fn, &spec, &hooks[p]);
		char msg[160];
		snprintf(msg, sizeof(msg), "install on %s (%s)", plan[p].name, argus_reloc_error_name(err));
		check(err == 0, msg);
	}

	/* the main thread's first record creates its ring: errno and xmm0 survive */
	errno = 1234;
	double d = fn_double(1.25);
	check(errno == 1234, "errno kept across the first record (ring creation)");
	check(d == 2.5, "double argument and result kept across the first record");

	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	check(results_wrong == 0, "hooked functions return the right results under 4 threads");

	struct tally t = {0};
	int rings = drain_dir(dir, &t);
	char msg[200];
	snprintf(msg, sizeof(msg), "one ring per recording thread (%d)", rings);
	check(rings == THREADS + 1, msg);
	long n = (long)THREADS * CALLS;
	snprintf(msg, sizeof(msg), "entry records: plain %ld rip %ld branch %ld call %ld (want %ld; bad %ld, lost %ld)",
		 t.enter[P_PLAIN], t.enter[P_RIP], t.enter[P_BRANCH], t.enter[P_CALL], n, t.bad, t.lost);
	/* fn_call calls fn_plain: one more fn_plain entry per call */
	check(t.enter[P_PLAIN] == 2 * n && t.enter[P_RIP] == n && t.enter[P_BRANCH] == n &&
	      t.enter[P_CALL] == n && t.enter[P_DOUBLE] == 1 && t.bad == 0 && t.lost == 0, msg);
	snprintf(msg, sizeof(msg), "return records: plain %ld rip %ld branch %ld call %ld double %ld",
		 t.ret[P_PLAIN], t.ret[P_RIP], t.ret[P_BRANCH], t.ret[P_CALL], t.ret[P_DOUBLE]);
	check(t.ret[P_PLAIN] == 2 * n && t.ret[P_RIP] == 0 && t.ret[P_BRANCH] == n && t.ret[P_CALL] == n &&
	      t.ret[P_DOUBLE] == 1, msg);

	int restored = 1;
	for (int p = 1; p < NPROBES; p++) {
		uint8_t saved[16];
		memcpy(saved, hooks[p].saved, hooks[p].patch_len);
		restored &= argus_hook_remove(&hooks[p]) == 0 &&
			    memcmp(plan[p].fn, saved, hooks[p].patch_len) == 0;
	}
	check(restored, "removal restores the original bytes");
	struct tally after = {0};
	drain_dir(dir, &after);   /* empties the main thread's ring */
	long more = fn_plain(1) + fn_branch(0) + fn_call(1);
	struct tally none = {0};
	drain_dir(dir, &none);
	check(more == 2 + 42 + 3 && none.enter[P_PLAIN] == 0 && none.enter[P_BRANCH] == 0,
	      "no records after removal, results unchanged");

	printf("%d passed, %d failed\n", passed, failed);
	if (argc == 2)
		remove_rings(dir);
	else
		printf("rings in %s\n", dir);
	return failed ? 1 : 0;
}
