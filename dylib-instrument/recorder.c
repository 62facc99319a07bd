/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Recorder (recorder.h).  Built -mgeneral-regs-only: this code runs between
 * a hooked function's entry and its prologue, where xmm0-7 may hold
 * arguments the trampoline did not save.  The one-time slow path calls libc
 * (open, mmap, snprintf...), which may use vector registers and errno, so it
 * runs behind a wrapper that saves the SSE state (fxsave) and errno.
 */
#include "recorder.h"
#include "probe_record.h"
#include "uring.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if !defined(__APPLE__)
#include <sys/syscall.h>
#endif
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

enum { RING_NONE, RING_OPEN, RING_FAILED };

/* The timestamp of a record.  x86_64: the raw TSC (a few ns; the kernel's
 * own CLOCK_MONOTONIC is derived from it when its clocksource is tsc), which
 * the draining daemon converts; macOS: CLOCK_UPTIME_RAW, the kdebug clock;
 * elsewhere CLOCK_MONOTONIC through the vDSO. */
static int use_tsc;   /* only where the kernel itself trusts the TSC (clocksource tsc) */

static inline uint64_t record_time(void)
{
#if defined(__APPLE__)
	/* mach absolute time in ns, the kdebug records' clock (docs/macos.md);
	 * read from the commpage, no syscall */
	return clock_gettime_nsec_np(CLOCK_UPTIME_RAW);
#else
#if defined(__x86_64__)
	if (use_tsc)
		return __rdtsc();
#endif
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
#endif
}

#if defined(__APPLE__)
#define RECORD_CLOCK CLOCK_UPTIME_RAW
/* The thread id the kdebug decoder gives this thread (out_tid in
 * tracer/kdebug/kdebug_decode.c): the main thread is tid = pid, others the low 32
 * bits of the 64-bit thread id, with bit 31 set when that is in the pid range. */
static uint32_t current_tid(uint32_t pid)
{
	uint64_t id = 0;
	if (pthread_main_np())
		return pid;
	pthread_threadid_np(NULL, &id);
	uint32_t v = (uint32_t)id;
	return v <= 99999u ? v | 0x80000000u : v;
}
#else
#define RECORD_CLOCK CLOCK_MONOTONIC
static uint32_t current_tid(uint32_t pid)
{
	(void)pid;
	return (uint32_t)syscall(SYS_gettid);
}
#endif

#if defined(__x86_64__) && !defined(__APPLE__)
static int kernel_clocksource_is_tsc(void)
{
	char buf[16] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	if (!f)
		return 0;
	int ok = fgets(buf, sizeof(buf), f) && strcmp(buf, "tsc\n") == 0;
	fclose(f);
	return ok;
}
#endif

struct thread_state {
	struct argus_uring ring;
	uint32_t pid, tid;
	int state;
	int busy;
};

static __thread struct thread_state ts __attribute__((tls_model("initial-exec")));
static char ring_dir[256];
static uint32_t ring_size = ARGUS_URING_DEFAULT_SIZE;
static pthread_key_t exit_key;
static void (*detach_fn)(void);
static int detach_done;

void argus_recorder_on_detach(void (*fn)(void))
{
	detach_fn = fn;
}

static void on_thread_exit(void *unused)
{
	argus_recorder_thread_done();
}

void argus_recorder_thread_done(void)
{
	if (ts.state == RING_OPEN)
		argus_uring_close(&ts.ring);
	ts.state = RING_FAILED;   /* a destructor running later records nothing */
}

/* The child of a fork has the parent's mapping of this thread's ring: it must
 * never write there (one producer per ring), so it starts over. */
static void after_fork_in_child(void)
{
	memset(&ts, 0, sizeof(ts));
}

int argus_recorder_init(const char *dir, uint32_t bytes)
{
	if (!dir || strlen(dir) >= sizeof(ring_dir))
		return -EINVAL;
	snprintf(ring_dir, sizeof(ring_dir), "%s", dir);
	if (bytes)
		ring_size = bytes;
#if defined(__x86_64__) && !defined(__APPLE__)
	use_tsc = kernel_clocksource_is_tsc() && !getenv("ARGUS_RECORD_CLOCK_MONOTONIC");
#endif
	int err = pthread_key_create(&exit_key, on_thread_exit);
	if (err)
		return -err;
	return -pthread_atfork(NULL, NULL, after_fork_in_child);
}

static void open_ring(void)
{
	char path[320];
	ts.state = RING_FAILED;
	if (!ring_dir[0])
		return;
	ts.pid = (uint32_t)getpid();
	ts.tid = current_tid(ts.pid);
	snprintf(path, sizeof(path), "%s/%u-%u.ring", ring_dir, ts.pid, ts.tid);
	unlink(path);   /* a leftover of a recycled tid */
	if (argus_uring_create(&ts.ring, path, ring_size, ts.pid, ts.tid,
			       use_tsc ? ARGUS_URING_CLOCK_TSC : RECORD_CLOCK) == 0) {
		ts.state = RING_OPEN;
		pthread_setspecific(exit_key, (void *)1);
	}
}

/* The reader is gone: this thread records no more, and the first thread to
 * notice runs the agent's removal once. */
static void detach(void)
{
	argus_recorder_thread_done();
	if (detach_fn && !__atomic_exchange_n(&detach_done, 1, __ATOMIC_ACQ_REL))
		detach_fn();
}

/* Runs fn (libc calls: open, mmap, mprotect...) from inside a trampoline,
 * where vector registers may hold the hooked function's arguments. */
#if defined(__x86_64__)
static void __attribute__((noinline)) run_preserving_state(void (*fn)(void))
{
	uint8_t fx[512] __attribute__((aligned(16)));
	int saved_errno = errno;
	__asm__ volatile("fxsave64 %0" : "=m"(fx));
	fn();
	__asm__ volatile("fxrstor64 %0" : : "m"(fx));
	errno = saved_errno;
}
#else
static void __attribute__((noinline)) run_preserving_state(void (*fn)(void))
{
	int saved_errno = errno;
	fn();
	errno = saved_errno;
}
#endif

void argus_record(uint16_t type, uint64_t obj, uint64_t fn, uint32_t probe_id)
{
	if (ts.busy)
		return;
	ts.busy = 1;
	if (ts.state == RING_NONE)
		run_preserving_state(open_ring);
	if (ts.state == RING_OPEN && __atomic_load_n(&ts.ring.hdr->detached, __ATOMIC_RELAXED))
		run_preserving_state(detach);
	if (ts.state == RING_OPEN) {
		struct argus_ev_probe *e = argus_uring_reserve(&ts.ring, sizeof(*e));
		if (e) {
			e->h.ts_ns = record_time();
			e->h.pid = ts.pid;
			e->h.tid = ts.tid;
			e->h.type = type;
			e->h.size = sizeof(*e);
			e->h.cpu = ARGUS_CPU_UNKNOWN;
			e->h.flags = 0;
			e->obj = obj;
			e->fn = fn;
			e->probe_id = probe_id;
			e->reserved = 0;
			argus_uring_commit(&ts.ring, sizeof(*e));
		}
	}
	ts.busy = 0;
}
