/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What crosses the boundary between the CPU sampler's BPF program
 * (argus_sample.bpf.c) and its loader (tracer/daemon/platform/argus_sample.c), besides the
 * records themselves (CPU_SAMPLE, USER_STACK, KERNEL_STACK in
 * tracer/ringbuf/argus_event.h).
 */
#ifndef ARGUS_SAMPLE_H
#define ARGUS_SAMPLE_H

#include "../../tracer/ringbuf/argus_event.h"

/* The sampler's own BPF ring buffer: about 200 records/s per CPU at 99 Hz
 * (a sample, sometimes a stack); the daemon drains it every loop turn (at least every 100 ms). */
#define ARGUS_SAMPLE_RINGBUF_BYTES (1u << 20)

/* (pid or 0, kind, stack id) -> when its stack record was last written. */
#define ARGUS_SAMPLE_STACK_SEEN_ENTRIES 16384

/* Written again once the last record of a stack is older than this, so a
 * window of the buffer holds the frames its samples name (as the tracer's
 * ARGUS_REFRESH_NS). */
#define ARGUS_SAMPLE_REFRESH_NS 1000000000ull

#define ARGUS_SAMPLE_DEFAULT_HZ 99

#endif /* ARGUS_SAMPLE_H */
