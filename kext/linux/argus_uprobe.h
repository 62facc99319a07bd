/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What crosses the boundary between the uprobe hooks' BPF programs
 * (argus_uprobe.bpf.c) and their loader (tracer/argus_uprobe.c), besides the
 * records themselves (struct argus_ev_probe, tracer/argus_event.h).
 */
#ifndef ARGUS_UPROBE_H
#define ARGUS_UPROBE_H

#include "../../tracer/argus_event.h"

/* The hooks' own BPF ring buffer: the points are low-rate (the issue's
 * GLib dispatches, pthread creation); the daemon drains it every loop turn. */
#define ARGUS_UPROBE_RINGBUF_BYTES (1u << 20)

/* Threads inside a hooked function that records its return: tid -> entry
 * address, so the return record names the function as the entry did. */
#define ARGUS_UPROBE_INFLIGHT_ENTRIES 16384

/* The attach cookie of every link: probe id and record type, so one program
 * serves every hook. */
#define ARGUS_UPROBE_COOKIE(probe_id, type) (((__u64)(probe_id) << 16) | (__u64)(type))
#define ARGUS_UPROBE_COOKIE_ID(c) ((__u32)((c) >> 16))
#define ARGUS_UPROBE_COOKIE_TYPE(c) ((__u16)((c) & 0xFFFF))

#endif /* ARGUS_UPROBE_H */
