/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * Per-CPU record staging: records are written into a per-CPU buffer and go
 * to the BPF ring buffer in blobs of up to STAGE_BYTES, one
 * bpf_ringbuf_output per blob instead of one reserve + submit per record.
 * The profile (docs/benchmarks.md) put the ring buffer at 45-110 ns of each
 * record (a spinlock with interrupts off, shared by every CPU); a blob of ~50
 * records pays it once and a copy of ~2 KiB of a hot cache line run.  argusd
 * splits a blob back into its records (tracer/daemon/platform/platform_linux.c on_record);
 * the trace file holds the same records as before.
 *
 * Invariants:
 *   - a program that writes records brackets its work with stage_enter /
 *     stage_exit, which take the lowest level of this CPU that no running
 *     program holds; its struct stage_hold (on its stack) names that level
 *     and its stage, and every record call takes it.  A program interrupting another (a wakeup in a hardirq
 *     during sys_enter) gets its own level, so records are never interleaved
 *     byte-wise; nested levels are flushed when their program ends.
 *   - level 0 keeps its records across programs (the batching), and is
 *     flushed when the next record would not fit, when the CPU switches to
 *     idle, after any program that interrupted the idle task (a NO_HZ idle
 *     CPU has no tick), at every hrtimer expiry on the CPU (the tick: a busy
 *     CPU flushes at least once per tick), and before a record written directly
 *     (output(): variable-length stacks, wait sites), so records of one
 *     program keep their order in the file.
 *   - the records still staged when the programs are detached are lost: at
 *     most the last tick of a CPU busy until then, which is why the loader
 *     stays attached for a few ticks after a stop request (linux_stop).
 *   - a blob that does not fit in the ring buffer counts all its records as
 *     dropped.
 *   - gen counts every change of a stage's records (submit, flush, growing
 *     the last record), never reset.  A record staged at level 0 when gen
 *     became g is still the last record of that stage, intact and at the
 *     same offset, as long as the stage's gen is g: only a program holding
 *     level 0 changes level 0 (an interrupting program gets a higher level
 *     and its own stage, flushed when it ends: its records precede the
 *     level-0 ones in the file either way), every such change bumps gen, and
 *     a reserve() that is not submitted writes only past len.  So a program
 *     holding level 0 that finds gen == g may rewrite that record in place
 *     (stage_last_record; the SYSCALL record, argus_trace.bpf.c): no other
 *     program reads or writes the stage meanwhile, and the blob is not yet
 *     in the ring buffer.  gens of different CPUs are unrelated, so a
 *     position names its CPU (struct stage_pos).
 *
 * Included by argus_trace.bpf.c after the ring buffer and drop counter.
 */
#ifndef ARGUS_STAGE_BPF_H
#define ARGUS_STAGE_BPF_H

#define STAGE_BYTES 2048        /* flush threshold and largest blob; a power of two (index mask) */
_Static_assert(ARGUS_EVENT_MAX_SIZE <= STAGE_BYTES, "a record fits an empty stage");
#define STAGE_LEVELS 3          /* task context, and two nested interrupts */
#define STAGE_NONE STAGE_LEVELS /* no level for the running program: its records are dropped and counted */

struct stage {
	__u32 len;               /* bytes staged */
	__u32 nrec;              /* records staged */
	__u64 gen;               /* changes of the staged records, ever (invariants above) */
	/* Twice the threshold, so that the verifier can bound every offset and
	 * length with a mask: the stage never holds more than STAGE_BYTES. */
	__u8 buf[2 * STAGE_BYTES];
};

/* Programs on one CPU nest like the interrupts that start them (last in,
 * first out; tracepoint programs do not sleep and, with preemption off in
 * tracepoints, are not preempted), so the levels in use are always
 * 0..k and the running program holds the highest: it is derived from the
 * busy bits when the program takes it (stage_enter) and kept in the
 * program's own struct stage_hold, never in the map, so a program
 * interrupted anywhere in stage_enter / stage_exit still has its own level
 * afterwards. */
/* struct argus_stage_ctl: argus_trace.h (argusd reads its unseen count). */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAGE_LEVELS);
	__type(key, __u32);
	__type(value, struct stage);
} stages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct argus_stage_ctl);
} stage_ctls SEC(".maps");

static __always_inline struct argus_stage_ctl *stage_ctl(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stage_ctls, &zero);
}

/* The running program's hold on its level, from stage_enter to stage_exit.
 * The level cannot change while the program runs (a program interrupting
 * it takes the next level and gives it back before it returns), so the
 * level and its stage are looked up once per program and every record
 * call takes the hold: bench/bpf_line_profile.py had the repeated per-CPU
 * lookups at ~20% of sys_exit. */
struct stage_hold {
	struct argus_stage_ctl *c;     /* NULL: no control block, nothing taken */
	struct stage *st;        /* NULL: no level (all taken): records are dropped and counted */
	__u32 lvl;               /* STAGE_NONE with st NULL */
};

/* Every record the tracer loses is counted here: in the drops map (the
 * loader sums it into the trace's lost count) and in the CPU's control block
 * (c: the caller's h->c), which net_io_lineage reads for one load instead of
 * a lookup of the drops map on every socket call.  c is NULL only when
 * stage_ctl() found no control block, which a one-entry per-CPU array never
 * does for key 0 (the check is the verifier's). */
static __always_inline void stage_drops(struct argus_stage_ctl *c, __u64 n)
{
	count_drops(n);
	if (c)
		c->drops += n;
}

static __always_inline void stage_flush(struct argus_stage_ctl *c, struct stage *st)
{
	__u32 n = st->len & (2 * STAGE_BYTES - 1);

	if (n && bpf_ringbuf_output(&events, st->buf, n, submit_flags()))
		stage_drops(c, st->nrec);
	st->len = 0;
	st->nrec = 0;
	st->gen++;
}

/* Take the next level for the running program: the lowest clear busy bit,
 * so the levels in use are always 0..k and the running program holds the
 * highest.  With every level taken the program runs without one
 * (overflow), and its records are dropped and counted. */
static __always_inline void stage_enter(struct stage_hold *h)
{
	__u32 b, lvl;

	h->st = NULL;
	h->lvl = STAGE_NONE;
	h->c = stage_ctl();
	if (!h->c)
		return;
	b = h->c->busy;
	if (b == (1u << STAGE_LEVELS) - 1) {
		h->c->overflow++;
		return;
	}
	h->c->busy = b | (b + 1);
	/* The bit just set, as an index, without branches (a level known per
	 * branch would split every verifier state after it in three). */
	lvl = (b & 1) + (b >> 1 & 1) + (b >> 2 & 1);
	h->lvl = lvl;
	h->st = bpf_map_lookup_elem(&stages, &lvl);
}

/* flush: also flush level 0 (the CPU goes idle, or a tick).  Programs
 * that may run on the idle task (interrupts, wakeups) pass
 * `... || on_idle()`: the syscall programs never do, and skip the call. */
static __always_inline bool on_idle(void)
{
	return !(__u32)bpf_get_current_pid_tgid();
}

static __always_inline void stage_exit(struct stage_hold *h, bool flush)
{
	if (!h->c)
		return;
	if (h->lvl == STAGE_NONE) {
		h->c->overflow--;
		return;
	}
	/* A nested level is flushed when its program ends; level 0 when the
	 * caller says so (on the idle task the program interrupted idle: the
	 * CPU may sleep for long with no tick, so nothing staged may wait for
	 * the next program). */
	if (h->st && (h->lvl || flush))
		stage_flush(h->c, h->st);
	h->c->busy &= ~(1u << (h->lvl & 31));
}

/* The CPU's timeline at a sched_switch from prev to next: the previous
 * switch here went to last_in, so a prev other than that one means the
 * kernel switched at least once without reporting it (some kernels run no
 * tracepoint at all while certain tasks are current: their switch-outs,
 * syscalls, and the interrupts and wakeups that land on them never reach any
 * tracer).  Every record of that stretch is missing from the trace; each
 * such stretch is counted once, and argusd writes the count into the trace
 * as unreported switches (header.switches_unreported and LOST records of that
 * kind; tracer/daemon/platform/platform_linux.c), apart from the records the
 * tracer lost, so the hole is never silent nor taken for a drop.  Runs for
 * every switch, traced tasks or not (the daemon's own included), so the
 * timeline stays whole. */
static __always_inline void stage_note_switch(struct stage_hold *h, __u32 prev_tid, __u32 next_tid)
{
	struct argus_stage_ctl *c = h->c;

	if (!c)
		return;
	if (c->last_in && c->last_in != prev_tid + 1)
		c->unseen++;
	c->last_in = next_tid + 1;
}

/* Room for a record of `size` bytes (<= ARGUS_EVENT_MAX_SIZE) in the running
 * program's level; submit() makes it part of the stage. */
static __always_inline void *reserve(struct stage_hold *h, __u32 size)
{
	struct stage *st = h->st;

	if (!st) {
		stage_drops(h->c, 1);
		return NULL;
	}
	if (st->len + size > STAGE_BYTES)
		stage_flush(h->c, st);
	return st->buf + (st->len & (STAGE_BYTES - 1));
}

static __always_inline void submit(struct stage_hold *h, void *rec)
{
	struct stage *st = h->st;

	if (!st)
		return;
	st->len += ((struct argus_event_header *)rec)->size;
	st->nrec++;
	st->gen++;
}

/* Where a record staged at level 0 lies: the CPU, its offset, and the
 * stage's gen just after its submit_marked(). */
struct stage_pos {
	__u64 gen;
	__u32 off;
	__u32 cpu;               /* STAGE_POS_NONE: the record is not staged at level 0 */
};
#define STAGE_POS_NONE 0xffffffffu

/* submit(rec), and its position in *pos: none when it went to a nested
 * level (flushed when its program ends). */
static __always_inline void submit_marked(struct stage_hold *h, void *rec, struct stage_pos *pos)
{
	struct stage *st = h->st;
	__u32 size = ((struct argus_event_header *)rec)->size;

	pos->cpu = STAGE_POS_NONE;
	if (!st)
		return;
	st->len += size;
	st->nrec++;
	st->gen++;
	if (h->lvl)
		return;
	pos->gen = st->gen;
	pos->off = st->len - size;
	pos->cpu = bpf_get_smp_processor_id();
}

/* The record at pos, if it is still the last record of level 0 on this CPU
 * and the running program holds level 0 (see gen above), with room to grow
 * it to new_size in place; else NULL.  gens of different CPUs are
 * unrelated, so the CPU is compared first.  The caller rewrites the record
 * and calls stage_grow_last. */
static __always_inline void *stage_last_record(struct stage_hold *h, const struct stage_pos *pos, __u32 new_size)
{
	struct stage *st = h->st;

	if (!st || h->lvl || pos->cpu != bpf_get_smp_processor_id())
		return NULL;
	if (st->gen != pos->gen || pos->off + new_size > STAGE_BYTES)
		return NULL;
	return st->buf + (pos->off & (STAGE_BYTES - 1));
}

/* The last record grew from old_size to new_size bytes (same record count). */
static __always_inline void stage_grow_last(struct stage_hold *h, __u32 old_size, __u32 new_size)
{
	struct stage *st = h->st;

	if (!st)
		return;
	st->len += new_size - old_size;
	st->gen++;
}

/* Variable-length records are built in scratch memory and written directly,
 * after the stage so that the file keeps the program's order. */
static __always_inline void output(struct stage_hold *h, void *rec, __u64 size)
{
	if (h->st)
		stage_flush(h->c, h->st);
	if (bpf_ringbuf_output(&events, rec, size, submit_flags()))
		stage_drops(h->c, 1);
}

#endif /* ARGUS_STAGE_BPF_H */
