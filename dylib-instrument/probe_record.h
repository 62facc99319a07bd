/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a trampoline records: a schema record (struct argus_event_header of
 * tracer/argus_event.h, ts_ns CLOCK_MONOTONIC, size padded to 8) with a
 * small payload.  The type numbers live here until argusd drains the rings
 * into the trace file; they then move into enum argus_event_type (and
 * schema.py / argus_decode.c), keeping these values.  They start at 48 so
 * the tracer's own types can grow meanwhile without a clash, and stay below
 * 64 (argus_decode.c keeps a 64-bit mask of types).  Until then the decoder
 * skips them as unknown types and counts them (forward compatibility).
 */
#ifndef ARGUS_PROBE_RECORD_H
#define ARGUS_PROBE_RECORD_H

#include "argus_event.h"

enum argus_probe_type {
	ARGUS_EV_CALLBACK_BEGIN = 48,
	ARGUS_EV_CALLBACK_END = 49,
	ARGUS_EV_ENQUEUE = 50,
	ARGUS_EV_IPC_SEND = 51,
	ARGUS_EV_IPC_RECV = 52,
	ARGUS_EV_MUTEX_LOCK = 53,
	ARGUS_EV_MUTEX_UNLOCK = 54,
	ARGUS_EV_INPUT = 55,
	ARGUS_EV_PROBE_RETURN = 56,   /* the return of any hooked function asked for */
};

#define ARGUS_PROBE_TYPE_FIRST ARGUS_EV_CALLBACK_BEGIN
#define ARGUS_PROBE_TYPE_LAST ARGUS_EV_PROBE_RETURN
#define ARGUS_CPU_UNKNOWN 0xFFFF      /* h.cpu: a trampoline does not ask the kernel */

struct argus_ev_probe {               /* 48 bytes */
	struct argus_event_header h;
	__u64 obj;                    /* first argument (mutex, GSource, ...); return value for PROBE_RETURN */
	__u64 fn;                     /* address of the hooked function */
	__u32 probe_id;               /* index of the hook in the hook spec */
	__u32 reserved;
};

#endif
