/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Patching live code while other threads run it.  One aligned 8-byte store
 * makes a thread *entering* the function see the old or the new bytes,
 * never a mix; it does not help a thread that already ran the first of the
 * instructions the patch replaces and resumes at the next one, which is now
 * in the middle of the jump (nor a patch that spans two 8-byte words).
 * The kernel handles the same problem for optimized kprobes by waiting
 * until no task can be inside the replaced bytes; a process cannot stop its
 * own threads, so a helper process does it (ptrace: Linux only).
 */
#ifndef ARGUS_QUIESCE_H
#define ARGUS_QUIESCE_H

#include <stdint.h>

/* Runs patch(arg) with every other thread of this process stopped at an
 * instruction outside (lo, hi): lo itself is fine, a thread there runs the
 * new bytes.  With one thread, just runs it.  Returns patch's result, or
 * -EBUSY when the threads could not be stopped (no ptrace permission, a
 * debugger attached, a thread that does not leave the range): the caller
 * then leaves the code alone. */
int argus_quiesced_patch(uint64_t lo, uint64_t hi, int (*patch)(void *), void *arg);

#endif
