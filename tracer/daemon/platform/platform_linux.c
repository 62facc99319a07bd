// SPDX-License-Identifier: Apache-2.0
/*
 * Linux event source: loads kext/linux/argus_trace.bpf.c through its libbpf
 * skeleton and moves its records from the BPF ring buffer into the file ring
 * buffer.  Records leave the kernel in final format (argus_event.h), so
 * draining is a validated copy, nothing more.
 *
 * Loader order (libbpf-tools): open -> configure read-only data (daemon pid,
 * syscall table, wakeup threshold) and map sizes -> drop programs whose
 * tracepoint this kernel lacks, bind the fentry/fexit syscall slots to the
 * traced syscalls' entry points -> load -> attach -> poll.
 *
 * Syscalls are traced with fentry/fexit where the kernel can (BTF for each
 * entry point, BPF trampolines), else with the raw_syscalls tracepoints,
 * which make every syscall on the machine pay: a load that fails with the
 * slots is redone without them, and an attach that fails attaches the
 * tracepoints instead.  `argus status` shows which (syscall_probes).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "argus_trace.h"
#include "argus_trace.skel.h"
#include "bpf_loader_util.h"
#include "cgroup_path.h"
#include "platform.h"

/* How syscalls are traced. */
enum syscall_probes {
	SYSCALLS_OFF,
	SYSCALLS_FENTRY,       /* fentry/fexit on the traced syscalls' entry points */
	SYSCALLS_TRACEPOINT,   /* raw_syscalls sys_enter/sys_exit */
};

static const char *const syscall_probe_names[] = { "off", "fentry", "tracepoint" };

struct linux_tracer {
	struct argus_trace_bpf *obj;
	enum syscall_probes syscalls;
	int fentry_required;             /* --syscall-probes fentry: no fallback */
	int fentry_targets;              /* syscalls bound to fentry/fexit slots */
	struct ring_buffer *ring;
	struct argus_rb_producer *out;   /* the destination while poll runs */
	int ncpus;
	uint64_t *drop_values;           /* one per possible CPU */
	struct argus_stage_ctl *ctl_values; /* one per possible CPU: the stage_ctls map */
	uint64_t records;
	uint64_t rejected;
	int verbose;
	int lean_programs;               /* sched_switch_lean / sched_waking_lean loaded */
	void (*observe)(void *ctx, const void *rec, uint32_t size);
	void *observe_ctx;
	/* Processes whose user stacks were drained since the daemon last asked
	 * (argus_platform_ops.stack_pids): it records their mappings. */
	struct argus_pid_queue stack_pids;
};

/*
 * Which syscalls are traced, how their arguments are decoded and what a
 * thread blocked in them waits for.  Numbers are per architecture (x86_64
 * read is 0 and futex 202; arm64 read is 63 and futex 98), so the table is
 * keyed by the __NR_ names of the architecture this loader is compiled for,
 * which is the one it runs on.  arm64 has no poll, select, epoll_wait or
 * pause (libc uses ppoll, pselect6, epoll_pwait), hence the #ifdefs.
 */
struct syscall_entry {
	int nr;
	__u8 layout;
	__u8 wait_reason;
	const char *name;      /* the kernel's entry point is SYSCALL_SYMBOL_PREFIX name */
};

#define SC(name, layout, reason) { __NR_##name, ARGUS_SCL_##layout, ARGUS_WAIT_##reason, #name }

/* The kernel's per-architecture wrappers that take the user's pt_regs
 * (arch/x86/include/asm/syscall_wrapper.h and its arm64 twin). */
#if defined(__x86_64__)
#define SYSCALL_SYMBOL_PREFIX "__x64_sys_"
#elif defined(__aarch64__)
#define SYSCALL_SYMBOL_PREFIX "__arm64_sys_"
#endif

static const struct syscall_entry syscall_table[] = {
	/* reads: pipes, sockets, eventfd, ttys, files */
	SC(read, FD_CHAN, READ),
	SC(readv, FD_CHAN, READ),
	SC(pread64, FD_CHAN, READ),
	SC(preadv, FD_CHAN, READ),
	SC(preadv2, FD_CHAN, READ),
	SC(recvfrom, FD_CHAN, READ),
	SC(recvmsg, FD_CHAN, READ),
	SC(recvmmsg, FD_CHAN, READ),
	/* writes: block when a pipe or socket buffer is full */
	SC(write, FD_CHAN, WRITE),
	SC(writev, FD_CHAN, WRITE),
	SC(pwrite64, FD_CHAN, WRITE),
	SC(pwritev, FD_CHAN, WRITE),
	SC(pwritev2, FD_CHAN, WRITE),
	SC(sendto, FD_CHAN, WRITE),
	SC(sendmsg, FD_CHAN, WRITE),
	SC(sendmmsg, FD_CHAN, WRITE),
	/* connection setup */
	SC(connect, FD, ACCEPT),
	SC(accept, FD_ONLY, ACCEPT),
	SC(accept4, FD_ONLY, ACCEPT),
	/* locks and conditions */
	SC(futex, FUTEX, FUTEX),
#ifdef __NR_futex_waitv
	SC(futex_waitv, FUTEX_WAITV, FUTEX),
#endif
	/* event loops */
#ifdef __NR_epoll_wait
	SC(epoll_wait, EPOLL, POLL),
#endif
	SC(epoll_pwait, EPOLL, POLL),
#ifdef __NR_epoll_pwait2
	SC(epoll_pwait2, EPOLL_TS, POLL),
#endif
#ifdef __NR_poll
	SC(poll, POLL, POLL),
#endif
	SC(ppoll, POLL_TS, POLL),
#ifdef __NR_select
	SC(select, SELECT, POLL),
#endif
	SC(pselect6, SELECT_TS, POLL),
	/* sleeps, children, yields */
	SC(nanosleep, NANOSLEEP, SLEEP),
	SC(clock_nanosleep, CLOCK_NANOSLEEP, SLEEP),
	SC(wait4, WAIT4, CHILD),
	SC(waitid, WAITID, CHILD),
	SC(sched_yield, NOARGS, YIELD),
	/* other waits and channels: recorded, wait reason "other syscall" */
	SC(io_uring_enter, IO_URING, OTHER_SYSCALL),
	SC(msgsnd, FD, OTHER_SYSCALL),
	SC(msgrcv, FD, OTHER_SYSCALL),
	SC(mq_timedsend, FD, OTHER_SYSCALL),
	SC(mq_timedreceive, FD, OTHER_SYSCALL),
	SC(timerfd_settime, TIMERFD, OTHER_SYSCALL),
	SC(splice, SPLICE, OTHER_SYSCALL),
	SC(semop, FD, OTHER_SYSCALL),
	SC(semtimedop, FD, OTHER_SYSCALL),
	/* file locks: fcntl only for the lock-setting commands (filtered in BPF) */
	SC(flock, FLOCK, OTHER_SYSCALL),
	SC(fcntl, FCNTL, OTHER_SYSCALL),
	SC(fsync, FD_ONLY, OTHER_SYSCALL),
	SC(fdatasync, FD_ONLY, OTHER_SYSCALL),
#ifdef __NR_pause
	SC(pause, NOARGS, OTHER_SYSCALL),
#endif
	SC(rt_sigsuspend, NOARGS, OTHER_SYSCALL),
	SC(rt_sigtimedwait, NOARGS, OTHER_SYSCALL),
};

#define SYSCALL_TABLE_LEN (sizeof(syscall_table) / sizeof(syscall_table[0]))
_Static_assert(SYSCALL_TABLE_LEN <= ARGUS_SYSCALL_SLOTS,
	       "more traced syscalls than fentry/fexit slots in argus_trace.bpf.c");

/* Programs that only track interrupt state and emit nothing: their skipped
 * runs lose no record. */
static const char *const state_program_prefixes[] = {
	"irq_handler_", "softirq_", "hrtimer_expire_exit", "hrtimer_setup", "hrtimer_init", "local_timer_", "irq_work_",
	"call_function_",
};

/* Programs without which the trace has no causality at all. */
static const char *const required_programs[] = { "sched_switch", "sched_waking" };

static int verbose_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return vfprintf(stderr, fmt, args);
}

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static uint64_t round_up_pow2(uint64_t v)
{
	uint64_t p = 1;

	while (p < v && p < (1ull << 62))
		p <<= 1;
	return p;
}

/* The calls whose ret counts bytes moved on a socket, and where they name
 * the peer (NET_IO records); sendmmsg / recvmmsg count messages instead. */
static __u8 net_io_args(int nr)
{
	switch (nr) {
	case __NR_read:
	case __NR_readv:
	case __NR_write:
	case __NR_writev:
		return ARGUS_NIO_FD;
	case __NR_sendto:
	case __NR_recvfrom:
		return ARGUS_NIO_SOCKADDR;
	case __NR_sendmsg:
	case __NR_recvmsg:
		return ARGUS_NIO_MSGHDR;
	default:
		return ARGUS_NIO_NONE;
	}
}

static void fill_syscall_classes(volatile struct argus_syscall_class *classes)
{
	size_t i;

	for (i = 0; i < SYSCALL_TABLE_LEN; i++) {
		const struct syscall_entry *e = &syscall_table[i];

		if (e->nr < 0 || e->nr >= ARGUS_MAX_SYSCALLS)
			continue;
		classes[e->nr].layout = e->layout;
		classes[e->nr].wait_reason = e->wait_reason;
		classes[e->nr].net_io = net_io_args(e->nr);
	}
}

static int is_required(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(required_programs) / sizeof(required_programs[0]); i++)
		if (!strcmp(name, required_programs[i]))
			return 1;
	return 0;
}

static int is_slot(const char *name, const char *prefix)
{
	return !strncmp(name, prefix, strlen(prefix));
}

/* Whether the kernel has a function of this name at all (/proc/kallsyms
 * lists it even when BTF does not). */
static int kallsyms_has(const char *sym)
{
	char line[256], name[128];
	int found = 0;
	FILE *f;

	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return 1;   /* cannot tell: assume it exists, fentry is then not safe */
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %*s %127s", name) == 1 && !strcmp(name, sym))
			found = 1;
	fclose(f);
	return found;
}

/* A kernel function of this name taking (const struct pt_regs *), as the
 * syscall wrappers do. */
static int pt_regs_function(const struct btf *vmlinux, const char *name)
{
	const struct btf_param *param;
	const struct btf_type *t;
	int id;

	id = btf__find_by_name_kind(vmlinux, name, BTF_KIND_FUNC);
	if (id <= 0)
		return 0;
	t = btf__type_by_id(vmlinux, btf__type_by_id(vmlinux, id)->type);
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) != 1)
		return 0;
	param = btf_params(t);
	t = btf__type_by_id(vmlinux, param->type);
	if (!t || !btf_is_ptr(t))
		return 0;
	t = btf__type_by_id(vmlinux, t->type);
	while (t && (btf_is_const(t) || btf_is_volatile(t) || btf_is_typedef(t)))
		t = btf__type_by_id(vmlinux, t->type);
	return t && btf_is_struct(t) && !strcmp(btf__name_by_offset(vmlinux, t->name_off), "pt_regs");
}

/*
 * The fentry targets, in syscall-table order: the entry point of every
 * traced syscall that this kernel has.  One the kernel lacks altogether
 * (CONFIG_SYSVIPC off: no msgsnd) returns ENOSYS without running anything
 * worth tracing, so it is left out; one that exists without BTF cannot be
 * traced with fentry, so the whole mode is refused (-ENOENT).
 */
static int fentry_targets(struct linux_tracer *t, const struct btf *vmlinux,
			  char names[][64], int *count, char *why, size_t whylen)
{
#ifdef SYSCALL_SYMBOL_PREFIX
	char target[64];
	size_t i;
	int n = 0;

	for (i = 0; i < SYSCALL_TABLE_LEN; i++) {
		snprintf(names[n], 64, "%s%s", SYSCALL_SYMBOL_PREFIX, syscall_table[i].name);
		if (pt_regs_function(vmlinux, names[n])) {
			n++;
			continue;
		}
		/* x86's SYSCALL_DEFINE0 makes __x64_sys_<name> an alias of
		 * __do_sys_<name>, and BTF keeps only the latter (same address,
		 * same pt_regs argument). */
		snprintf(target, sizeof(target), "__do_sys_%s", syscall_table[i].name);
		if (pt_regs_function(vmlinux, target)) {
			snprintf(names[n++], 64, "%s", target);
			continue;
		}
		if (kallsyms_has(names[n])) {
			snprintf(why, whylen, "%s has no BTF", names[n]);
			return -ENOENT;
		}
		if (t->verbose)
			fprintf(stderr, "argusd: syscall %s not in this kernel, not traced\n", syscall_table[i].name);
	}
	*count = n;
	if (!n) {
		snprintf(why, whylen, "no syscall entry point in kernel BTF");
		return -ENOENT;
	}
	return 0;
#else
	snprintf(why, whylen, "no syscall entry point names for this architecture");
	return -EOPNOTSUPP;
#endif
}

/*
 * Whether this kernel lets a tracing program hook a kernel function: a
 * two-instruction fexit program loaded and attached on one target, then
 * dropped.  Some kernels refuse the load outright (sandboxes answer EPERM
 * before the verifier runs), others the attach (no ftrace direct calls);
 * asked here, the answer costs a millisecond instead of a failed load of the
 * whole object.
 */
static int fentry_usable(const struct btf *vmlinux, const char *target, char *why, size_t whylen)
{
	/* r0 = 0; exit */
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_FEXIT);
	int prog_fd, link_fd;

	opts.attach_btf_id = btf__find_by_name_kind(vmlinux, target, BTF_KIND_FUNC);
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "argus_fprobe", "GPL", insns, 2, &opts);
	if (prog_fd < 0) {
		snprintf(why, whylen, "failed to load fexit program on %s: %s", target, strerror(errno));
		return 0;
	}
	link_fd = bpf_raw_tracepoint_open(NULL, prog_fd);
	if (link_fd < 0)
		snprintf(why, whylen, "failed to attach fexit program on %s: %s", target, strerror(errno));
	else
		close(link_fd);
	close(prog_fd);
	return link_fd >= 0;
}

/* Syscalls go to the tracepoints from here on; says why, once. */
static void fall_back_to_tracepoints(struct linux_tracer *t, const char *why)
{
	fprintf(stderr, "argusd: syscalls hooked with raw_syscalls tracepoints, fentry unavailable: %s\n", why);
	t->syscalls = SYSCALLS_TRACEPOINT;
	t->fentry_targets = 0;
}

/*
 * tp_btf programs fail to load as a whole when one tracepoint is missing, so
 * decide per program from the kernel BTF (btf_trace_<name> exists for every
 * tracepoint) instead of loading and guessing from errors.
 *
 * Syscalls: with fentry, the slots are bound to their targets and the spare
 * ones left out; the raw_syscalls programs are loaded too but not attached,
 * kept for an attach of the slots that fails (linux_start).  With
 * tracepoints, no slot is loaded: a slot without a target cannot be.
 */
static int select_programs(struct linux_tracer *t, const struct argus_tracer_config *cfg,
			   char *err, size_t errlen)
{
	char targets[SYSCALL_TABLE_LEN][64];
	int ntargets = 0, nenter = 0, nexit = 0;
	struct bpf_program *prog;
	struct btf *vmlinux;
	char type_name[128];
	int ret = 0;

	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		ret = -errno;
		argus_set_err(err, errlen, "failed to load kernel BTF: %s", strerror(errno));
		return ret;
	}
	if (t->syscalls == SYSCALLS_FENTRY) {
		char why[192];

		ret = fentry_targets(t, vmlinux, targets, &ntargets, why, sizeof(why));
		if (!ret && !fentry_usable(vmlinux, targets[0], why, sizeof(why)))
			ret = -EPERM;
		if (ret && t->fentry_required) {
			argus_set_err(err, errlen, "failed to hook syscalls with fentry: %s", why);
			goto cleanup;
		}
		if (ret) {
			fall_back_to_tracepoints(t, why);
			ntargets = 0;
			ret = 0;
		} else {
			t->fentry_targets = ntargets;
		}
	}
	bpf_object__for_each_program(prog, t->obj->obj) {
		const char *sec = bpf_program__section_name(prog);
		const char *name = bpf_program__name(prog);
		const char *tp = strchr(sec, '/');
		int *used = is_slot(name, "sys_enter_") ? &nenter : is_slot(name, "sys_exit_") ? &nexit : NULL;

		if (used) {
			if (t->syscalls != SYSCALLS_FENTRY || *used >= ntargets) {
				bpf_program__set_autoload(prog, false);
				continue;
			}
			ret = bpf_program__set_attach_target(prog, 0, targets[*used]);
			if (ret) {
				argus_set_err(err, errlen, "failed to set attach target %s: %s", targets[*used],
					      strerror(-ret));
				goto cleanup;
			}
			(*used)++;
			continue;
		}
		if (!t->lean_programs && (!strcmp(name, "sched_switch_lean") || !strcmp(name, "sched_waking_lean"))) {
			bpf_program__set_autoload(prog, false);   /* full detail: off the per-switch path */
			continue;
		}
		if (!strcmp(name, "sys_enter") || !strcmp(name, "sys_exit")) {
			if (t->syscalls == SYSCALLS_OFF) {
				bpf_program__set_autoload(prog, false);
				continue;
			}
			bpf_program__set_autoattach(prog, t->syscalls == SYSCALLS_TRACEPOINT);
		}
		if (!tp)
			continue;
		snprintf(type_name, sizeof(type_name), "btf_trace_%s", tp + 1);
		if (btf__find_by_name_kind(vmlinux, type_name, BTF_KIND_TYPEDEF) > 0)
			continue;
		if (is_required(name)) {
			ret = -ENOENT;
			argus_set_err(err, errlen, "failed to find tracepoint %s: not in this kernel's BTF", tp + 1);
			break;
		}
		if (t->verbose)
			fprintf(stderr, "argusd: tracepoint %s not in this kernel, skipped\n", tp + 1);
		bpf_program__set_autoload(prog, false);
	}
cleanup:
	btf__free(vmlinux);
	return ret;
}

/* open -> configure -> select -> load of the BPF object, with syscalls
 * traced the way t->syscalls says; on failure nothing is left open. */
static int open_object(struct linux_tracer *t, const struct argus_tracer_config *cfg, char *err, size_t errlen)
{
	struct argus_trace_bpf *obj;
	uint64_t ring_bytes, wake;
	int ret;

	obj = argus_trace_bpf__open();
	if (!obj) {
		ret = -errno;
		argus_set_err(err, errlen, "failed to open BPF object: %s", strerror(errno));
		return ret;
	}
	t->obj = obj;

	/* The BPF ring buffer must be a power-of-two number of pages. */
	ring_bytes = cfg->kernel_buffer_bytes ? cfg->kernel_buffer_bytes : ARGUS_BPF_RINGBUF_DEFAULT;
	if (ring_bytes < 4096)
		ring_bytes = 4096;
	ring_bytes = round_up_pow2(ring_bytes);
	if (ring_bytes > (1ull << 31)) {
		ret = -EINVAL;
		argus_set_err(err, errlen, "failed to size BPF ring buffer: %llu bytes is over the 2 GiB limit",
			(unsigned long long)ring_bytes);
		goto cleanup;
	}
	ret = bpf_map__set_max_entries(obj->maps.events, (__u32)ring_bytes);
	if (ret) {
		argus_set_err(err, errlen, "failed to size BPF ring buffer: %s", strerror(-ret));
		goto cleanup;
	}
	wake = cfg->wakeup_bytes ? cfg->wakeup_bytes : ring_bytes / 4;
	if (wake >= ring_bytes)
		wake = ring_bytes / 2;
	obj->rodata->wakeup_bytes = (__u32)wake;
	obj->rodata->targ_exclude_tgid = cfg->exclude_tgid;
	obj->rodata->capture_stacks = cfg->capture_stacks != 0;
	obj->rodata->scope_on = cfg->scope_cgroup_id || cfg->scope_netns;
	obj->rodata->scope_cgroup_id = cfg->scope_cgroup_id;
	obj->rodata->scope_netns = cfg->scope_netns;
	/* Scrambles kernel addresses (timers, files) into ids; a failed
	 * getrandom leaves the ids unscrambled but still correct. */
	if (getrandom((void *)&obj->rodata->id_key, sizeof(obj->rodata->id_key), 0) !=
	    sizeof(obj->rodata->id_key))
		obj->rodata->id_key = 0;
	fill_syscall_classes(obj->rodata->syscall_class);
	/* Test hook: implied NET_IO calls keep their short records too (net_io.bpf.h). */
	obj->rodata->net_io_verify = getenv("ARGUS_NET_IO_VERIFY") && !strcmp(getenv("ARGUS_NET_IO_VERIFY"), "1");

	ret = select_programs(t, cfg, err, errlen);
	if (ret)
		goto cleanup;

	ret = argus_trace_bpf__load(obj);
	if (ret) {
		argus_set_err(err, errlen, "failed to load BPF programs: %s", strerror(-ret));
		goto cleanup;
	}
	return 0;

cleanup:
	argus_trace_bpf__destroy(obj);
	t->obj = NULL;
	return ret;
}

static int linux_open(const struct argus_tracer_config *cfg, void **state, char *err, size_t errlen)
{
	struct linux_tracer *t = NULL;
	int ret;

	libbpf_set_print(cfg->verbose ? verbose_print : quiet_print);

	t = calloc(1, sizeof(*t));
	if (!t) {
		ret = -ENOMEM;
		argus_set_err(err, errlen, "failed to allocate tracer state: %s", strerror(ENOMEM));
		goto cleanup;
	}
	t->verbose = cfg->verbose;
	t->lean_programs = cfg->lean_programs;
	t->observe = cfg->observe;
	t->observe_ctx = cfg->observe_ctx;

	if (!cfg->trace_syscalls)
		t->syscalls = SYSCALLS_OFF;
	else if (cfg->syscall_probes == ARGUS_SYSCALL_PROBES_TRACEPOINT)
		t->syscalls = SYSCALLS_TRACEPOINT;
	else
		t->syscalls = SYSCALLS_FENTRY;
	t->fentry_required = cfg->syscall_probes == ARGUS_SYSCALL_PROBES_FENTRY;
	ret = open_object(t, cfg, err, errlen);
	if (ret && t->syscalls == SYSCALLS_FENTRY && !t->fentry_required) {
		/* The probe passed but a slot did not load (an entry point the
		 * verifier refuses): the tracepoints trace the same syscalls. */
		fall_back_to_tracepoints(t, err);
		ret = open_object(t, cfg, err, errlen);
	}
	if (ret)
		goto cleanup;

	t->ncpus = libbpf_num_possible_cpus();
	if (t->ncpus <= 0) {
		ret = t->ncpus ? t->ncpus : -EINVAL;
		argus_set_err(err, errlen, "failed to count possible CPUs: %s", strerror(-ret));
		goto cleanup;
	}
	t->drop_values = calloc(t->ncpus, sizeof(*t->drop_values));
	t->ctl_values = calloc(t->ncpus, sizeof(*t->ctl_values));
	if (!t->drop_values || !t->ctl_values) {
		ret = -ENOMEM;
		argus_set_err(err, errlen, "failed to allocate drop counters: %s", strerror(ENOMEM));
		goto cleanup;
	}
	*state = t;
	return 0;

cleanup:
	if (t) {
		argus_trace_bpf__destroy(t->obj);
		free(t->drop_values);
		free(t->ctl_values);
	}
	free(t);
	return ret;
}

union argus_proc_ns_buf {
	struct argus_ev_proc_ns rec;
	char bytes[ARGUS_EVENT_MAX_SIZE];   /* the same 256 bytes: the path may fill it */
};

/* The kernel's PROC_NS names the cgroup by id: the copy that goes to the
 * file carries its path too (cgroup_path.c), padded to 8. */
static const struct argus_event_header *with_cgroup_path(const struct argus_event_header *h,
							 union argus_proc_ns_buf *out)
{
	size_t len;

	memset(out, 0, sizeof(*out));
	memcpy(&out->rec, h, ARGUS_PROC_NS_BASE_SIZE);
	len = argus_cgroup_path(h->pid, out->rec.cgroup_id, out->rec.path, ARGUS_PROC_NS_MAX_PATH);
	out->rec.h.size = (uint16_t)(ARGUS_PROC_NS_BASE_SIZE + (len ? (len + 1 + 7) / 8 * 8 : 0));
	return &out->rec.h;
}

/* One BPF ring-buffer sample is a blob of whole records (the programs stage
 * them per CPU, kext/linux/stage.bpf.h).  Invalid input from the kernel side
 * is counted and skipped, never fatal: a record whose size does not fit the
 * blob ends it.  Only the sample bounds are checked here; argus_rb_write
 * checks the frame (size in range, a multiple of 8) for every producer. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct linux_tracer *t = ctx;
	union argus_proc_ns_buf ns_rec;
	size_t off = 0;

	while (off < size) {
		const struct argus_event_header *h = (const void *)((const char *)data + off);

		if (size - off < sizeof(*h) || h->size < sizeof(*h) || h->size > size - off || !t->out) {
			t->rejected++;
			return 0;
		}
		off += h->size;
		if (h->type == ARGUS_EV_PROC_NS && h->size == ARGUS_PROC_NS_BASE_SIZE)
			h = with_cgroup_path(h, &ns_rec);
		if (argus_rb_write(t->out, h, h->size)) {
			t->rejected++;
			continue;
		}
		t->records++;
		if (t->observe)
			t->observe(t->observe_ctx, h, h->size);
		if (h->type == ARGUS_EV_USER_STACK)
			argus_pid_queue_push(&t->stack_pids, h->pid);
	}
	return 0;
}

static size_t linux_stack_pids(void *state, uint32_t *out, size_t max)
{
	struct linux_tracer *t = state;

	return argus_pid_queue_take(&t->stack_pids, out, max);
}

static void use_syscall_tracepoints(struct linux_tracer *t)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, t->obj->obj) {
		const char *name = bpf_program__name(prog);

		if (is_slot(name, "sys_enter_") || is_slot(name, "sys_exit_"))
			bpf_program__set_autoattach(prog, false);
		else if (!strcmp(name, "sys_enter") || !strcmp(name, "sys_exit"))
			bpf_program__set_autoattach(prog, true);
	}
}

static int linux_start(void *state, char *err, size_t errlen)
{
	struct linux_tracer *t = state;
	int ret;

	ret = argus_trace_bpf__attach(t->obj);
	if (ret && t->syscalls == SYSCALLS_FENTRY && !t->fentry_required) {
		/* Loaded but one slot not attachable (an entry point that is
		 * notrace): the tracepoints, loaded beside the slots. */
		char why[96];

		snprintf(why, sizeof(why), "failed to attach fentry programs: %s", strerror(-ret));
		argus_trace_bpf__detach(t->obj);
		use_syscall_tracepoints(t);
		fall_back_to_tracepoints(t, why);
		ret = argus_trace_bpf__attach(t->obj);
	}
	if (ret) {
		argus_set_err(err, errlen, "failed to attach BPF programs: %s", strerror(-ret));
		goto cleanup;
	}
	t->ring = ring_buffer__new(bpf_map__fd(t->obj->maps.events), on_record, t, NULL);
	if (!t->ring) {
		ret = -errno;
		argus_set_err(err, errlen, "failed to create ring buffer reader: %s", strerror(errno));
		goto cleanup;
	}
	return 0;

cleanup:
	argus_trace_bpf__detach(t->obj);
	return ret;
}

static int linux_fd(void *state)
{
	struct linux_tracer *t = state;

	return t->ring ? ring_buffer__epoll_fd(t->ring) : -1;
}

static int linux_poll(void *state, struct argus_rb_producer *out, int timeout_ms)
{
	struct linux_tracer *t = state;
	uint64_t before = t->records;
	int ret;

	if (!t->ring)
		return -EINVAL;
	t->out = out;
	/* poll clears the epoll readiness; consume then takes everything, since
	 * below the wakeup threshold the kernel never signals at all. */
	ret = ring_buffer__poll(t->ring, timeout_ms);
	if (ret >= 0 || ret == -EINTR)
		ret = ring_buffer__consume(t->ring);
	t->out = NULL;
	if (ret < 0 && ret != -EINTR)
		return ret;
	return (int)((t->records - before) > INT_MAX ? INT_MAX : (t->records - before));
}

static uint64_t kernel_drops(struct linux_tracer *t)
{
	uint64_t sum;

	if (argus_percpu_sum(t->obj->maps.drops, t->drop_values, t->ncpus, &sum))
		return 0;
	return sum;
}

/* sched_switches the kernel never reported (stage_note_switch in
 * kext/linux/stage.bpf.h): each is a stretch of a CPU whose records are all
 * missing.  Counted apart from the lost records (header.switches_unreported):
 * the tracer dropped nothing there, the kernel ran no tracepoint. */
static uint64_t linux_switches_unreported(void *state)
{
	struct linux_tracer *t = state;
	__u32 zero = 0;
	uint64_t sum = 0;
	int i;

	if (bpf_map__lookup_elem(t->obj->maps.stage_ctls, &zero, sizeof(zero), t->ctl_values,
				 sizeof(*t->ctl_values) * t->ncpus, 0))
		return 0;
	for (i = 0; i < t->ncpus; i++)
		sum += t->ctl_values[i].unseen;
	return sum;
}

static int is_state_program(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(state_program_prefixes) / sizeof(state_program_prefixes[0]); i++)
		if (!strncmp(name, state_program_prefixes[i], strlen(state_program_prefixes[i])))
			return 1;
	return 0;
}

/* BPF does not run a program that fires while the same program is already
 * running on the CPU (a wakeup inside an interrupt that hit sched_waking's
 * own program, say); the kernel counts those runs and each one is a record
 * that was never produced. */
static uint64_t recursion_misses(struct linux_tracer *t)
{
	struct bpf_prog_info info;
	struct bpf_program *prog;
	uint64_t sum = 0;
	__u32 len;
	int fd;

	bpf_object__for_each_program(prog, t->obj->obj) {
		fd = bpf_program__fd(prog);
		if (fd < 0 || is_state_program(bpf_program__name(prog)))
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
			sum += info.recursion_misses;
	}
	return sum;
}

static uint64_t linux_lost(void *state)
{
	struct linux_tracer *t = state;

	return kernel_drops(t) + recursion_misses(t) + t->rejected;
}

static void linux_stats(void *state, struct argus_platform_stats *st)
{
	struct linux_tracer *t = state;

	st->records = t->records;
	st->kernel_drops = kernel_drops(t) + recursion_misses(t);
	st->rejected = t->rejected;
	st->syscall_probes = syscall_probe_names[t->syscalls];
	st->syscall_functions = t->syscalls == SYSCALLS_FENTRY ? t->fentry_targets : 0;
}

static int is_syscall_program(const char *name)
{
	return !strcmp(name, "sys_enter") || !strcmp(name, "sys_exit") || is_slot(name, "sys_enter_") ||
	       is_slot(name, "sys_exit_");
}

/* The tiers (docs/linux-tracer.md, "Detail tiers").  The flag alone stops
 * the programs' work, but a raw_syscalls tracepoint with any program on it
 * puts every syscall of every task on the slow path, which is most of the
 * full tier's cost (docs/benchmarks.md): lean also detaches their links.
 * Going full, argus_gen moves first, so a call entered before the links
 * went away is not taken for the current one; exits are attached before
 * entries (skeleton order), then the flag lets them run.  Attaching takes
 * milliseconds; the flag, the next event. */
static int linux_set_detail(void *state, int lean)
{
	struct linux_tracer *t = state;
	const struct bpf_object_skeleton *sk = t->obj->skeleton;
	int i, ret = 0;

	if (lean) {
		t->obj->bss->argus_lean = 1;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		for (i = sk->prog_cnt - 1; i >= 0; i--) {
			struct bpf_link **link = sk->progs[i].link;

			if (*link && is_syscall_program(sk->progs[i].name)) {
				bpf_link__destroy(*link);
				*link = NULL;
			}
		}
		return 0;
	}
	t->obj->bss->argus_gen++;
	for (i = 0; i < sk->prog_cnt; i++) {
		struct bpf_program *prog = *sk->progs[i].prog;
		struct bpf_link **link = sk->progs[i].link;

		if (*link || !is_syscall_program(sk->progs[i].name) || !bpf_program__autoload(prog) ||
		    !bpf_program__autoattach(prog))
			continue;
		*link = bpf_program__attach(prog);
		if (!*link) {
			ret = -errno;
			break;
		}
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	t->obj->bss->argus_lean = 0;
	return ret;
}

/* The programs stage records per CPU and flush at least once per tick of a
 * busy CPU (an idle CPU flushed when it went idle): staying attached for a
 * few ticks after the stop request puts every record older than the request
 * into the ring buffer.  10 ms covers HZ=250 twice over. */
#define STOP_FLUSH_NS 10000000L

static void linux_stop(void *state)
{
	struct linux_tracer *t = state;
	struct timespec flush = { 0, STOP_FLUSH_NS };

	nanosleep(&flush, NULL);
	argus_trace_bpf__detach(t->obj);
}

static void linux_close(void *state)
{
	struct linux_tracer *t = state;

	if (!t)
		return;
	ring_buffer__free(t->ring);
	argus_trace_bpf__destroy(t->obj);
	free(t->drop_values);
	free(t->ctl_values);
	free(t);
}

static const struct argus_platform_ops linux_ops = {
	.name = "linux-ebpf",
	.open = linux_open,
	.start = linux_start,
	.fd = linux_fd,
	.poll = linux_poll,
	.lost = linux_lost,
	.switches_unreported = linux_switches_unreported,
	.stats = linux_stats,
	.stack_pids = linux_stack_pids,
	.set_detail = linux_set_detail,
	.stop = linux_stop,
	.close = linux_close,
};

const struct argus_platform_ops *argus_platform_native(void)
{
	return &linux_ops;
}
