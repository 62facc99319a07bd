// SPDX-License-Identifier: Apache-2.0
/* The uprobe side of the trampoline bench: on entry of bench_target, the same
 * 48-byte record a trampoline writes (struct argus_ev_probe: ts, pid/tid,
 * type, size, cpu, first argument, function address, probe id), into a BPF
 * ring buffer the bench drains. */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* __u8..__u64 came with linux/types.h above; argus_event.h would otherwise
 * pull libc headers, which have no BPF target (and bpf_tracing.h, already
 * included, keeps the user-space pt_regs names it chose). */
#define __VMLINUX_H__
#include "argus_event.h"
#include "probe_record.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} events SEC(".maps");

const volatile __u32 probe_id = 0;

SEC("uprobe")
int BPF_KPROBE(record_entry, long arg0)
{
	struct argus_ev_probe *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e)
		return 0;
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	e->h.ts_ns = bpf_ktime_get_ns();
	e->h.pid = pid_tgid >> 32;
	e->h.tid = (__u32)pid_tgid;
	e->h.type = ARGUS_EV_CALLBACK_BEGIN;
	e->h.size = sizeof(*e);
	e->h.cpu = bpf_get_smp_processor_id();
	e->h.flags = 0;
	e->obj = arg0;
	e->fn = PT_REGS_IP(ctx);
	e->probe_id = probe_id;
	e->reserved = 0;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
