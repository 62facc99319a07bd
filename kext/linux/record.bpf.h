/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * The record header every BPF object of Argus writes (struct
 * argus_event_header, tracer/argus_event.h): one helper, shared by the
 * tracer (argus_trace.bpf.c) and the CPU sampler (argus_sample.bpf.c).
 */
#ifndef ARGUS_RECORD_BPF_H
#define ARGUS_RECORD_BPF_H

static __always_inline void fill_header(struct argus_event_header *h, __u16 type, __u16 size,
					__u32 pid, __u32 tid, __u64 ts)
{
	h->ts_ns = ts;
	h->pid = pid;
	h->tid = tid;
	h->type = type;
	h->size = size;
	h->cpu = bpf_get_smp_processor_id();
	h->flags = 0;
}

#endif /* ARGUS_RECORD_BPF_H */
