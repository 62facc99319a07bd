/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a trampoline records: struct argus_ev_probe of the schema
 * (tracer/ringbuf/argus_event.h: ARGUS_EV_CALLBACK_BEGIN .. ARGUS_EV_PROBE_RETURN),
 * ts_ns as the ring's clock says (uring.h), cpu unknown.
 */
#ifndef ARGUS_PROBE_RECORD_H
#define ARGUS_PROBE_RECORD_H

#include "argus_event.h"

#define ARGUS_PROBE_TYPE_FIRST ARGUS_EV_CALLBACK_BEGIN
#define ARGUS_PROBE_TYPE_LAST ARGUS_EV_PROBE_RETURN
#define ARGUS_CPU_UNKNOWN 0xFFFF      /* h.cpu: a trampoline does not ask the kernel */

#endif
