/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libargus-static.so / .dylib: the recorder of statically instrumented
 * libraries.  `argus instrument` gives a library a DT_NEEDED (Mach-O: an
 * LC_LOAD_DYLIB on @loader_path/libargus-static.dylib) on this file and a
 * pointer slot relocated (bound) against argus_static_enter; its trampolines
 * call that (static_abi.h: the arguments).  macOS: built by
 * scripts/build-macos.sh.
 *
 * The ring directory is found as `argus run` finds it: $ARGUS_URING_DIR,
 * else $ARGUS_RUN_DIR/urings, else /run/argus/urings (the daemon's default
 * run directory).  When it cannot be used (no daemon, not writable, another
 * user's) one line on stderr says why, once per process, and the functions
 * just run.
 *
 * Return hooks keep the caller's return address on a per-thread shadow
 * stack, as the run-time hooks do (hook_events.c): keyed by the caller's
 * stack pointer, so frames a longjmp abandoned are dropped at the next
 * return.  The stack is mapped on a thread's first return hook (a TLS
 * pointer only: a library loaded by dlopen has little static TLS to spare)
 * and unmapped at thread exit.  A call deeper than SHADOW_DEPTH, or made
 * before the recorder was ready, gets no return record.
 * Built -mgeneral-regs-only, like the recorder: vector registers may hold
 * the hooked function's arguments or its floating-point result.
 */
#include "../recorder.h"
#include "../arch/frames.h"
#include "static_abi.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__APPLE__)
#define secure_getenv getenv   /* macOS has no secure_getenv */
#endif

#define SHADOW_DEPTH 256
#define OBJ_PROCESS 1          /* ARGUS_OBJ_PROCESS of tracer/ringbuf/argus_event.h */
#define DEFAULT_RUN_DIR "/run/argus"

struct shadow_entry {
	uint64_t ret;
	uint64_t caller_sp;
	uint64_t obj;
};

struct shadow {
	int depth;
	struct shadow_entry e[SHADOW_DEPTH];
};

/* Set once the recorder knows its directory.  Events before that (a hooked
 * libc called by constructors that run before ours) are dropped: recording
 * them would mark the calling thread's ring as failed for good. */
static int ready;
static pthread_key_t shadow_key;
static __thread struct shadow *shadow __attribute__((tls_model("initial-exec")));

static void shadow_free(void *p)
{
	shadow = NULL;
	munmap(p, sizeof(struct shadow));
}

static struct shadow *shadow_get(void)
{
	if (shadow)
		return shadow;
	void *p = mmap(NULL, sizeof(struct shadow), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	pthread_setspecific(shadow_key, p);     /* unmapped at thread exit */
	return shadow = p;
}

static uint64_t keep(uint32_t word, uint64_t obj)
{
	return word & ARGUS_STATIC_OBJ32 ? (uint32_t)obj : obj;
}

static void on_enter(uint32_t word, uint32_t probe_id, uint64_t fn, uint64_t arg0, argus_enter_frame *f,
		     uint64_t stub)
{
	if (ARGUS_STATIC_ENTER_TYPE(word))
		argus_record((uint16_t)ARGUS_STATIC_ENTER_TYPE(word), keep(word, arg0), fn, probe_id);
	if (!ARGUS_STATIC_RET_TYPE(word) || !f || !stub)
		return;
	int saved = errno;                     /* mmap on the thread's first return hook */
	struct shadow *s = shadow_get();
	errno = saved;
	if (!s || s->depth >= SHADOW_DEPTH)
		return;
	/* claim the slot before filling it: a signal handler calling a hooked
	 * function in between then pushes above it, not over it */
	int i = s->depth++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	unsigned which = ARGUS_STATIC_RET_OBJ(word);
	s->e[i].ret = FRAME_RET(f);
	s->e[i].caller_sp = ENTER_CALLER_SP(f);
	s->e[i].obj = which == 7 ? OBJ_PROCESS : which ? FRAME_ARG(f, which - 1) : 0;
	FRAME_RET(f) = stub;
}

static void on_return(uint32_t word, uint32_t probe_id, uint64_t fn, uint64_t result, argus_return_frame *f)
{
	struct shadow *s = shadow;
	uint64_t caller_sp = RETURN_CALLER_SP(f);

	/* The stub runs only where on_enter put it: the stack holds its entry
	 * (the deepest one at or above this caller's stack pointer). */
	while (s->depth > 1 && s->e[s->depth - 1].caller_sp < caller_sp)
		s->depth--;
	struct shadow_entry *e = &s->e[s->depth - 1];
	FRAME_RET(f) = e->ret;
	uint64_t obj = ARGUS_STATIC_RET_OBJ(word) ? e->obj : result;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);   /* read before the slot is released */
	s->depth--;
	argus_record((uint16_t)ARGUS_STATIC_RET_TYPE(word), keep(word, obj), fn, probe_id);
}

__attribute__((visibility("default")))
void argus_static_enter(uint32_t word, uint32_t probe_id, uint64_t fn, uint64_t arg0, void *frame, uint64_t stub)
{
	if (word & ARGUS_STATIC_RETURNING)
		on_return(word, probe_id, fn, arg0, frame);    /* always: the caller's return address is ours */
	else if (__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		on_enter(word, probe_id, fn, arg0, frame, stub);
}

/* "" when dir can hold this process's rings, else why not (one clause). */
static const char *unusable(const char *dir, char *why, size_t n)
{
	struct stat st;

	if (stat(dir, &st) != 0) {
		snprintf(why, n, "%s: %s (no tracing daemon: start one with `argus start`, or set ARGUS_RUN_DIR "
			 "to the run directory of the one to record into)", dir, strerror(errno));
		return why;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, n, "%s is not a directory", dir);
		return why;
	}
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		snprintf(why, n, "refusing %s: it belongs to uid %u (not root or you)", dir, (unsigned)st.st_uid);
		return why;
	}
	if (st.st_mode & 022) {
		snprintf(why, n, "refusing %s: other users can write it (mode %03o)", dir, (unsigned)(st.st_mode & 0777));
		return why;
	}
	if (access(dir, W_OK | X_OK) != 0) {
		snprintf(why, n, "%s: %s (the daemon's rings are root's: run the program as root)", dir,
			 strerror(errno));
		return why;
	}
	return "";
}

__attribute__((constructor)) static void argus_static_init(void)
{
	char path[256], why[512];
	const char *dir = secure_getenv("ARGUS_URING_DIR");

	if (!dir || !*dir) {
		const char *run = secure_getenv("ARGUS_RUN_DIR");
		if (snprintf(path, sizeof(path), "%s/urings", run && *run ? run : DEFAULT_RUN_DIR) >= (int)sizeof(path)) {
			fprintf(stderr, "argus: instrumented library not recording: ARGUS_RUN_DIR is too long\n");
			return;
		}
		dir = path;
	}
	if (*unusable(dir, why, sizeof(why))) {
		fprintf(stderr, "argus: instrumented library not recording: %s\n", why);
		return;
	}
	int err = pthread_key_create(&shadow_key, shadow_free);
	if (!err)
		err = -argus_recorder_init(dir, 0);
	if (err) {
		fprintf(stderr, "argus: instrumented library not recording into %s: %s\n", dir, strerror(err));
		return;
	}
	/* the main thread's ring closes at exit (other threads' at thread exit),
	 * so argusd forgets it at once */
	atexit(argus_recorder_thread_done);
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
}
