/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The recorder: what a trampoline calls.  Each thread lazily creates its own
 * ring (uring.h) in $ARGUS_URING_DIR the first time it records; afterwards
 * an event costs a clock read (vDSO, no syscall) and a few stores.  Nothing
 * is recorded when the directory is not set, when the ring could not be
 * created, or while the thread is already inside the recorder (a hooked
 * function called from the slow path).
 */
#ifndef ARGUS_RECORDER_H
#define ARGUS_RECORDER_H

#include <stdint.h>

/* Records one struct argus_ev_probe.  Safe to call from a trampoline: it
 * uses no vector register and keeps errno (the slow path saves both). */
void argus_record(uint16_t type, uint64_t obj, uint64_t fn, uint32_t probe_id);

/* Thread exit / fork bookkeeping and the directory; called once by the
 * agent's constructor (or a test) before hooks go in.  0 or -errno. */
int argus_recorder_init(const char *ring_dir, uint32_t ring_bytes);

/* Called once, from the first record after the reader detached (tracing
 * stopped): the agent removes its hooks there.  Runs with the vector state
 * and errno saved, like ring creation. */
void argus_recorder_on_detach(void (*fn)(void));

/* Closes the calling thread's ring (tests; thread exit does it itself). */
void argus_recorder_thread_done(void);

#endif
