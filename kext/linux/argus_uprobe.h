/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What crosses the boundary between the uprobe hooks' BPF programs
 * (argus_uprobe.bpf.c) and their loader (tracer/daemon/platform/argus_uprobe.c), besides the
 * records themselves (struct argus_ev_probe, tracer/ringbuf/argus_event.h).
 */
#ifndef ARGUS_UPROBE_H
#define ARGUS_UPROBE_H

#include "../../tracer/ringbuf/argus_event.h"
#include "../../dylib-instrument/ret_deref.h"

/* The hooks' own BPF ring buffer: the points are low-rate (the issue's
 * GLib dispatches, pthread creation); the daemon drains it every loop turn. */
#define ARGUS_UPROBE_RINGBUF_BYTES (1u << 20)

/* Threads inside a hooked function that records its return: (tid, probe
 * id) -> entry address (and the argument return_obj names), so the return
 * record names the function as the entry did. */
#define ARGUS_UPROBE_INFLIGHT_ENTRIES 16384

/* Hooks whose return record reads through the returned pointer (the spec's
 * ret_deref): probe id -> struct argus_ret_deref (dylib-instrument/ret_deref.h),
 * filled by the loader before attaching. */
#define ARGUS_UPROBE_DEREF_ENTRIES 256

/* The attach cookie of every link: probe id, record type (0 = none),
 * on an entry link whether the hook records its return too (the entry then
 * keeps its address for it), which argument (0-4; 6 = the process key) is
 * the record's obj and what the return record's obj is (return_obj: 0 the
 * return value, 1-5 argument 0-4 kept by the entry, 7 the process key; the
 * codes of dylib-instrument/hook.h) and whether obj keeps only its low 32
 * bits, so one program serves every hook. */
#define ARGUS_UPROBE_OBJ_PROCESS 6
#define ARGUS_UPROBE_RETURN_PROCESS 7
#define ARGUS_UPROBE_COOKIE(probe_id, type, has_return, obj_arg, return_obj, obj32) \
	(((__u64)(probe_id) << 16) | ((__u64)!!(obj32) << 15) | ((__u64)((return_obj) & 7) << 12) | \
	 ((__u64)((obj_arg) & 7) << 9) | ((__u64)!!(has_return) << 8) | (__u64)((type) & 0xFF))
#define ARGUS_UPROBE_COOKIE_ID(c) ((__u32)((c) >> 16))
#define ARGUS_UPROBE_COOKIE_TYPE(c) ((__u16)((c) & 0xFF))
#define ARGUS_UPROBE_COOKIE_HAS_RETURN(c) (((c) >> 8) & 1)
#define ARGUS_UPROBE_COOKIE_OBJ_ARG(c) (((c) >> 9) & 7)
#define ARGUS_UPROBE_COOKIE_RETURN_OBJ(c) (((c) >> 12) & 7)
#define ARGUS_UPROBE_COOKIE_OBJ32(c) (((c) >> 15) & 1)   /* keep obj's low 32 bits */

/* What an entry keeps for its return record. */
struct argus_uprobe_inflight {
	__u64 fn;
	__u64 obj;   /* the return record's obj when return_obj names an argument */
};

#endif /* ARGUS_UPROBE_H */
