/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * What every BPF object of Argus writes records with, shared by the tracer
 * (argus_trace.bpf.c) and the CPU sampler (argus_sample.bpf.c): the record
 * header (struct argus_event_header, tracer/ringbuf/argus_event.h) and the per-CPU
 * count of records lost to a full ring, which the loader sums into the
 * trace's lost count.  Each object gets its own drops map.
 */
#ifndef ARGUS_RECORD_BPF_H
#define ARGUS_RECORD_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

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

/* Per-CPU, so a plain add: a program does not run again on its CPU
 * before it returns (the kernel skips such runs). */
static __always_inline void count_drops(__u64 n)
{
	__u32 zero = 0;
	__u64 *cnt;

	cnt = bpf_map_lookup_elem(&drops, &zero);
	if (cnt)
		*cnt += n;
}

#endif /* ARGUS_RECORD_BPF_H */
