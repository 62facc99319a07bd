/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * Where a process lives, and the recording scope (argus_trace.bpf.c).
 *
 * PROC_NS records: a process's cgroup (v2 id, the kernfs inode of its
 * directory) and network namespace inode, written at exec, at the fork of a
 * new process (the child's) and when a process is moved to another cgroup
 * (cgroup_attach_task).  argusd appends the cgroup's path before the record
 * reaches the file (tracer/daemon/cgroup_path.c).
 *
 * The scope: `argus start --cgroup PATH` / `--netns NS` set scope_cgroup_id
 * (the cgroup or any cgroup below it) / scope_netns before load.  A task
 * outside is recorded nowhere, but for the wakeups that cross the boundary
 * (either end inside).  Unscoped (the default) scope_on is a constant
 * false: the verifier drops the test's branch, and what is left per call
 * site is the load of the flag (bench/scope_cost.py).
 */
#ifndef ARGUS_SCOPE_BPF_H
#define ARGUS_SCOPE_BPF_H

const volatile bool scope_on = false;           /* either below is set: one load for the unscoped test */
const volatile __u64 scope_cgroup_id = 0;       /* record only this cgroup and those below it; 0 = any */
const volatile __u32 scope_netns = 0;           /* record only this network namespace (inode); 0 = any */

/* Levels walked up from a task's cgroup to find scope_cgroup_id: deeper
 * nesting than this below the scope is taken as outside. */
#define SCOPE_MAX_DEPTH 16

/* Kernels before 6.15 named the parent link `parent`. */
struct kernfs_node___old {
	struct kernfs_node *parent;
};

/* Direct loads through the programs' BTF pointers (faulting loads the
 * verifier guards), not bpf_probe_read helper calls: a call clobbers the
 * argument registers, and the compiler would spill live values around the
 * scope test even where the test itself is dead code. */
static __always_inline struct kernfs_node *kn_parent(struct kernfs_node *kn)
{
	if (bpf_core_field_exists(kn->__parent))
		return kn->__parent;
	return ((struct kernfs_node___old *)kn)->parent;
}

static __always_inline __u64 task_cgroup_id(struct task_struct *t)
{
	return t->cgroups->dfl_cgrp->kn->id;
}

static __always_inline __u32 task_netns(struct task_struct *t)
{
	struct nsproxy *ns = t->nsproxy;

	/* NULL once an exiting task dropped its namespaces */
	return ns ? ns->net_ns->ns.inum : 0;
}

static __always_inline bool outside(struct task_struct *t)
{
	if (!scope_on)
		return false;
	if (scope_netns && task_netns(t) != scope_netns)
		return true;
	if (scope_cgroup_id) {
		struct kernfs_node *kn = t->cgroups->dfl_cgrp->kn;

		for (int i = 0; i < SCOPE_MAX_DEPTH && kn; i++) {
			if (kn->id == scope_cgroup_id)
				return false;
			kn = kn_parent(kn);
		}
		return true;
	}
	return false;
}

#ifdef ARGUS_STAGE_BPF_H      /* the tracer's records; the CPU sampler takes the scope test only */
static __always_inline void emit_proc_ns(struct stage_hold *h, struct task_struct *t)
{
	struct argus_ev_proc_ns *e;

	e = reserve(h, ARGUS_PROC_NS_BASE_SIZE);
	if (!e)
		return;
	e->cgroup_id = task_cgroup_id(t);
	e->netns_ino = task_netns(t);
	e->flags = 0;
	fill_header(&e->h, ARGUS_EV_PROC_NS, ARGUS_PROC_NS_BASE_SIZE, t->tgid, t->tgid, bpf_ktime_get_ns());
	submit(h, e);
}
#endif

#endif /* ARGUS_SCOPE_BPF_H */
