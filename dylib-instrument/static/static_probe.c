/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libargus-static.so / .dylib: the recorder of statically instrumented
 * libraries.  `argus instrument` gives a library a DT_NEEDED (Mach-O: an
 * LC_LOAD_DYLIB on @loader_path/libargus-static.dylib) on this file and a
 * pointer slot relocated (bound) against argus_static_enter; its trampolines
 * call that.  macOS: built by scripts/build-macos.sh.
 * Rings go to $ARGUS_URING_DIR (as under `argus run`); without it nothing
 * is recorded and the functions just run.  Built -mgeneral-regs-only, like
 * the recorder: vector registers may hold the hooked function's arguments.
 */
#include "../recorder.h"

#include <stdlib.h>

/* Set once the recorder knows its directory.  Events before that (a hooked
 * libc called by constructors that run before ours) are dropped: recording
 * them would mark the calling thread's ring as failed for good. */
static int ready;

__attribute__((visibility("default")))
void argus_static_enter(uint32_t type, uint32_t probe_id, uint64_t fn, uint64_t arg0)
{
	if (__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		argus_record((uint16_t)type, arg0, fn, probe_id);
}

__attribute__((constructor)) static void argus_static_init(void)
{
	const char *dir = getenv("ARGUS_URING_DIR");
	/* the main thread's ring closes at exit (other threads' at thread exit),
	 * so argusd forgets it at once */
	if (dir && *dir && argus_recorder_init(dir, 0) == 0) {
		atexit(argus_recorder_thread_done);
		__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	}
}
