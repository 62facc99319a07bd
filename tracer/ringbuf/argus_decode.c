/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Decoder: ring buffer file -> time-sorted array of struct argus_row.
 *
 * Algorithm (one pass over the data, no per-record allocation):
 *   1. open the buffer read-only (argus_rb_open validates the file header; a
 *      bad header is a hard error naming the field and its offset);
 *   2. size the row array from the chunk headers' nrecords totals
 *      (argus_rb_stats), growing it only if a live producer adds records;
 *   3. argus_rb_read visits the readable chunks in seq order; each record is
 *      validated and widened into the next row, so rows are in (chunk seq,
 *      position) order;
 *   4. a stable LSD radix sort of (ts - min_ts, row index) pairs, 11 bits per
 *      pass and only over the bits the time range needs, then one gather of
 *      the rows into a new array (in place if that cannot be allocated).
 *      Stability keeps (chunk seq, position) order among equal timestamps.
 *      Already sorted input (one producer) is detected and left alone.
 *
 * Invariants:
 *   - one row per record, except SWITCH (schema v3), which is split into the
 *     SWITCH_OUT and SWITCH_IN records it stands for (argus_split_switch), and
 *     SYSCALL (schema v4), split into its SYSCALL_ENTER and SYSCALL_EXIT
 *     (argus_split_syscall), each widened as such: rows never have type
 *     SWITCH or SYSCALL, and a trace gives the same rows as one of the
 *     separate records.
 *   - a row is produced only from a record whose frame is valid (size field
 *     matches, multiple of 8, 24..ARGUS_EVENT_MAX_SIZE) and whose size covers
 *     its type's payload; records longer than their type are accepted
 *     (fields appended by newer schemas are ignored).
 *   - a corrupt record ends its chunk (nothing after it can be framed
 *     reliably): counted in bad_records, the first one described in error.
 *   - unknown types with a valid frame are skipped and counted
 *     (unknown_records): forward compatibility.
 */
#include "argus_decode.h"
#include "argus_event.h"
#include "argus_radix_sort.h"
#include "argus_rb.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

_Static_assert(sizeof(struct argus_row) == 80, "struct argus_row is 80 bytes (schema.py)");
/* Record sizes documented in argus_event.h and docs/ring-buffer.md. */
_Static_assert(sizeof(struct argus_ev_switch_out) == 48 && sizeof(struct argus_ev_switch_in) == 32 &&
	       sizeof(struct argus_ev_switch) == 56 &&
	       offsetof(struct argus_ev_switch, wait_obj) == offsetof(struct argus_ev_switch_out, wait_obj) &&
	       sizeof(struct argus_ev_wakeup) == 40 && sizeof(struct argus_ev_syscall_enter) == 48 &&
	       sizeof(struct argus_ev_syscall_exit) == 40 &&
	       sizeof(struct argus_ev_syscall_enter_short) == ARGUS_SYSCALL_ENTER_SHORT_SIZE &&
	       sizeof(struct argus_ev_syscall_exit_short) == ARGUS_SYSCALL_EXIT_SHORT_SIZE &&
	       sizeof(struct argus_ev_syscall) == ARGUS_SYSCALL_SIZE &&
	       offsetof(struct argus_ev_syscall, obj2) == offsetof(struct argus_ev_syscall_enter_short, obj2) &&
	       sizeof(struct argus_ev_fork) == 48 &&
	       sizeof(struct argus_ev_comm) == 40 && sizeof(struct argus_ev_exit) == 32 &&
	       sizeof(struct argus_ev_proc_snapshot) == 48 && sizeof(struct argus_ev_data_flag) == 48 &&
	       sizeof(struct argus_ev_lost) == 40 && sizeof(struct argus_ev_fd_info) == 56 &&
	       sizeof(struct argus_ev_detail) == 40 && sizeof(struct argus_ev_net_io) == 88 &&
	       sizeof(struct argus_ev_net_io_short) == 40 &&
	       sizeof(struct argus_ev_timer) == 64 &&
	       sizeof(struct argus_ev_user_stack) == ARGUS_EVENT_MAX_SIZE &&
	       sizeof(struct argus_ev_mapping) == ARGUS_EVENT_MAX_SIZE &&
	       sizeof(struct argus_ev_wait_site) == 96 && sizeof(struct argus_ev_futex_state) == 48 &&
	       sizeof(struct argus_ev_file_lock) == 64 && sizeof(struct argus_ev_cpu_sample) == 48 &&
	       sizeof(struct argus_ev_go_snapshot) == 96,
	       "schema v4 record sizes");

/* Fixed part of the variable-length records. */
#define USER_STACK_BASE_SIZE offsetof(struct argus_ev_user_stack, frames)
#define MAPPING_BASE_SIZE offsetof(struct argus_ev_mapping, path)
_Static_assert(offsetof(struct argus_ev_proc_ns, path) == ARGUS_PROC_NS_BASE_SIZE &&
	       sizeof(struct argus_ev_proc_ns) == ARGUS_EVENT_MAX_SIZE, "PROC_NS layout");

/* Smallest valid size of each known type; 0 = unknown. */
static const uint16_t type_min_size[ARGUS_EV_TYPE_MAX] = {
	[ARGUS_EV_SWITCH_OUT] = ARGUS_SWITCH_OUT_BASE_SIZE,
	[ARGUS_EV_SWITCH_IN] = sizeof(struct argus_ev_switch_in),
	[ARGUS_EV_WAKEUP] = sizeof(struct argus_ev_wakeup),
	[ARGUS_EV_WAKEUP_NEW] = sizeof(struct argus_ev_wakeup),
	[ARGUS_EV_SYSCALL_ENTER] = ARGUS_SYSCALL_ENTER_SHORT_SIZE,
	[ARGUS_EV_SYSCALL_EXIT] = ARGUS_SYSCALL_EXIT_SHORT_SIZE,
	[ARGUS_EV_FORK] = sizeof(struct argus_ev_fork),
	[ARGUS_EV_EXEC] = sizeof(struct argus_ev_comm),
	[ARGUS_EV_EXIT] = sizeof(struct argus_ev_exit),
	[ARGUS_EV_THREAD_NAME] = sizeof(struct argus_ev_comm),
	[ARGUS_EV_PROC_SNAPSHOT] = sizeof(struct argus_ev_proc_snapshot),
	[ARGUS_EV_DATA_FLAG_WRITE] = sizeof(struct argus_ev_data_flag),
	[ARGUS_EV_DATA_FLAG_READ] = sizeof(struct argus_ev_data_flag),
	[ARGUS_EV_LOST] = ARGUS_LOST_BASE_SIZE,
	[ARGUS_EV_FD_INFO] = sizeof(struct argus_ev_fd_info),
	[ARGUS_EV_TIMER] = sizeof(struct argus_ev_timer),
	[ARGUS_EV_USER_STACK] = USER_STACK_BASE_SIZE,
	[ARGUS_EV_MAPPING] = MAPPING_BASE_SIZE + 8,
	[ARGUS_EV_WAIT_SITE] = sizeof(struct argus_ev_wait_site),
	[ARGUS_EV_FUTEX_STATE] = sizeof(struct argus_ev_futex_state),
	[ARGUS_EV_FILE_LOCK] = sizeof(struct argus_ev_file_lock),
	[ARGUS_EV_CPU_SAMPLE] = sizeof(struct argus_ev_cpu_sample),
	[ARGUS_EV_KERNEL_STACK] = USER_STACK_BASE_SIZE,
	[ARGUS_EV_SWITCH] = ARGUS_SWITCH_BASE_SIZE,
	[ARGUS_EV_SYSCALL] = ARGUS_SYSCALL_SIZE,
	[ARGUS_EV_DETAIL] = sizeof(struct argus_ev_detail),
	[ARGUS_EV_NET_IO] = sizeof(struct argus_ev_net_io),
	[ARGUS_EV_NET_IO_SHORT] = sizeof(struct argus_ev_net_io_short),
	[ARGUS_EV_PROC_NS] = ARGUS_PROC_NS_BASE_SIZE,
	[ARGUS_EV_CALLBACK_BEGIN ... ARGUS_EV_PROBE_RETURN] = sizeof(struct argus_ev_probe),
	[ARGUS_EV_GO_READY ... ARGUS_EV_GO_PARK] = sizeof(struct argus_ev_probe),
	[ARGUS_EV_GO_SNAPSHOT] = sizeof(struct argus_ev_go_snapshot),
};

/* Row and sort arrays reach gigabytes: back them with transparent huge pages
 * (when THP is in madvise mode) so filling them costs 512x fewer page faults.
 * The result is an ordinary malloc block: free()/realloc() work on it. */
#define HUGE_PAGE (2u << 20)
static void *alloc_big(size_t bytes)
{
	void *p = NULL;

	if (bytes < HUGE_PAGE)
		return malloc(bytes);
	if (posix_memalign(&p, HUGE_PAGE, bytes) != 0)
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, bytes & ~(size_t)(HUGE_PAGE - 1), MADV_HUGEPAGE);  /* advice only */
#endif
	return p;
}

struct decode_ctx {
	struct argus_decode_result *res;
	const char *path;
	uint64_t cap;
	/* Geometry, to turn (chunk seq, position) into a file offset. */
	uint64_t data_offset, chunk_size, nchunks;
	/* Chunk being visited. */
	bool in_chunk;
	bool drop_chunk;
	uint64_t chunk_seq;
	uint32_t chunk_pos;
	uint64_t frames_cap, strings_cap;
	/* Window (argus_decode_file_window); [0, UINT64_MAX] for the whole file. */
	uint64_t since_ns;
	uint64_t type_mask;          /* 0: every type */
};

__attribute__((format(printf, 3, 4)))
static void note_bad_record(struct decode_ctx *d, uint64_t offset, const char *fmt, ...)
{
	struct argus_decode_result *res = d->res;

	d->drop_chunk = true;
	if (res->bad_records++ == 0) {
		char why[160];
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(why, sizeof why, fmt, ap);
		va_end(ap);
		snprintf(res->error, sizeof res->error, "%s: corrupt record at offset 0x%llx: %s",
			 d->path, (unsigned long long)offset, why);
	}
}

static int grow_rows(struct decode_ctx *d)
{
	uint64_t cap = d->cap + d->cap / 2 + 4096;
	struct argus_row *rows = realloc(d->res->rows, cap * sizeof *rows);

	if (!rows)
		return -ENOMEM;
	d->res->rows = rows;
	d->cap = cap;
	return 0;
}

/* Room for n more elements of size elem in *arr (length len, capacity *cap). */
static int reserve_side(void **arr, uint64_t *cap, uint64_t len, uint64_t n, size_t elem)
{
	uint64_t want = *cap;
	void *grown;

	if (len + n <= *cap)
		return 0;
	while (want < len + n)
		want = want + want / 2 + 4096;
	grown = realloc(*arr, want * elem);
	if (!grown)
		return -ENOMEM;
	*arr = grown;
	*cap = want;
	return 0;
}

/* Frames and paths go to the side arrays; the row indexes them. */
static int widen_side(struct decode_ctx *d, struct argus_row *r, const void *rec, uint32_t size)
{
	struct argus_decode_result *res = d->res;

	if (r->type == ARGUS_EV_USER_STACK || r->type == ARGUS_EV_KERNEL_STACK) {
		const struct argus_ev_user_stack *e = rec;
		uint64_t n = (size - USER_STACK_BASE_SIZE) / sizeof(uint64_t);

		if (reserve_side((void **)&res->frames, &d->frames_cap, res->nframes, n, sizeof(uint64_t)))
			return -ENOMEM;
		if (n)   /* frames is still NULL before the first non-empty stack: memcpy(NULL, ., 0) is UB */
			memcpy(res->frames + res->nframes, e->frames, n * sizeof(uint64_t));
		r->obj = res->nframes;
		r->aux = (int32_t)n;
		r->obj2 = e->stack_id;
		res->nframes += n;
	} else if (r->type == ARGUS_EV_MAPPING) {
		const struct argus_ev_mapping *e = rec;
		size_t room = size - MAPPING_BASE_SIZE, len = strnlen(e->path, room);

		if (res->strings_len + len + 1 > UINT32_MAX)
			return 0;   /* offsets are 32-bit; a 4 GiB path table is not a real trace */
		if (reserve_side((void **)&res->strings, &d->strings_cap, res->strings_len, len + 1, 1))
			return -ENOMEM;
		memcpy(res->strings + res->strings_len, e->path, len);
		res->strings[res->strings_len + len] = 0;
		r->obj = e->start;
		r->obj2 = e->end;
		r->val = (int64_t)e->pgoff;
		r->aux = (int32_t)e->prot;
		r->nr = e->dev;
		r->peer_tid = (uint32_t)res->strings_len;
		r->peer_pid = (uint32_t)len;
		res->strings_len += len + 1;
	} else if (r->type == ARGUS_EV_PROC_NS) {
		/* the cgroup path, if argusd appended one, in the strings like a MAPPING's */
		const struct argus_ev_proc_ns *e = rec;
		size_t room = size - ARGUS_PROC_NS_BASE_SIZE, len = strnlen(e->path, room);

		r->obj = e->cgroup_id;
		r->obj2 = e->netns_ino;
		if (res->strings_len + len + 1 > UINT32_MAX)
			return 0;
		if (reserve_side((void **)&res->strings, &d->strings_cap, res->strings_len, len + 1, 1))
			return -ENOMEM;
		memcpy(res->strings + res->strings_len, e->path, len);
		res->strings[res->strings_len + len] = 0;
		r->peer_tid = (uint32_t)res->strings_len;
		r->peer_pid = (uint32_t)len;
		res->strings_len += len + 1;
	} else if (r->type == ARGUS_EV_GO_SNAPSHOT) {
		/* the wait reason's text in the strings, like a MAPPING's path */
		const struct argus_ev_go_snapshot *e = rec;
		size_t len = strnlen(e->wait, ARGUS_GO_SNAP_WAIT_LEN);

		if (res->strings_len + len + 1 > UINT32_MAX)
			return 0;
		if (reserve_side((void **)&res->strings, &d->strings_cap, res->strings_len, len + 1, 1))
			return -ENOMEM;
		if (len)
			memcpy(res->strings + res->strings_len, e->wait, len);
		res->strings[res->strings_len + len] = 0;
		r->peer_tid = (uint32_t)res->strings_len;
		r->peer_pid = (uint32_t)len;
		res->strings_len += len + 1;
	} else if (r->type == ARGUS_EV_WAIT_SITE) {
		/* (uint32)fd | events << 32 per kept fd, in the frames array */
		const struct argus_ev_wait_site *e = rec;
		uint64_t n = e->nkept < ARGUS_WAIT_SITE_MAX_FDS ? e->nkept : ARGUS_WAIT_SITE_MAX_FDS, k;

		if (reserve_side((void **)&res->frames, &d->frames_cap, res->nframes, n, sizeof(uint64_t)))
			return -ENOMEM;
		for (k = 0; k < n; k++)
			res->frames[res->nframes + k] = (uint32_t)e->fds[k] | (uint64_t)e->events[k] << 32;
		r->obj = res->nframes;
		r->peer_tid = (uint32_t)n;
		res->nframes += n;
	} else if (r->type == ARGUS_EV_NET_IO && !r->pad) {
		/* local_addr then remote_addr, 16 bytes each, as 4 frames entries
		 * (a NET_IO_SHORT's row, pad 1, has none: its record is 40 bytes) */
		const struct argus_ev_net_io *e = rec;

		if (reserve_side((void **)&res->frames, &d->frames_cap, res->nframes, 4, sizeof(uint64_t)))
			return -ENOMEM;
		memcpy(res->frames + res->nframes, e->local_addr, 16);
		memcpy(res->frames + res->nframes + 2, e->remote_addr, 16);
		r->obj = res->nframes;
		res->nframes += 4;
	}
	return 0;
}

static inline void widen(struct argus_row *r, const void *rec, const struct argus_event_header *h)
{
	memset(r, 0, sizeof *r);
	r->ts_ns = h->ts_ns;
	r->pid = h->pid;
	r->tid = h->tid;
	r->type = h->type;
	r->cpu = h->cpu;
	switch (h->type) {
	case ARGUS_EV_SWITCH_OUT: {
		const struct argus_ev_switch_out *e = rec;
		r->state = e->state;
		r->reason = e->wait_reason;
		r->nr = e->syscall_nr;
		r->obj = e->wait_obj;
		r->aux = e->prio;
		if (h->size >= sizeof(*e))
			r->obj2 = e->user_stack_id;
		break;
	}
	case ARGUS_EV_SWITCH_IN: {
		const struct argus_ev_switch_in *e = rec;
		r->peer_pid = e->prev_pid;
		r->peer_tid = e->prev_tid;
		break;
	}
	case ARGUS_EV_WAKEUP:
	case ARGUS_EV_WAKEUP_NEW: {
		const struct argus_ev_wakeup *e = rec;
		r->peer_pid = e->wakee_pid;
		r->peer_tid = e->wakee_tid;
		r->reason = e->context;
		r->irq = e->irq_kind;
		r->aux = (int32_t)e->irq_vec;
		r->obj = e->target_cpu;
		break;
	}
	case ARGUS_EV_SYSCALL_ENTER: {
		/* Two forms, told apart by size (schema v3): 64-bit obj and obj2, or 32. */
		if (h->size >= sizeof(struct argus_ev_syscall_enter)) {
			const struct argus_ev_syscall_enter *e = rec;
			r->nr = e->nr;
			r->aux = e->aux;
			r->obj = e->obj;
			r->obj2 = e->obj2;
		} else {
			const struct argus_ev_syscall_enter_short *e = rec;
			r->nr = e->nr;
			r->aux = e->aux;
			r->obj = e->obj;
			r->obj2 = e->obj2;
		}
		break;
	}
	case ARGUS_EV_SYSCALL_EXIT: {
		/* Two forms, told apart by size (schema v2): a 32-bit ret, or 64. */
		if (h->size >= sizeof(struct argus_ev_syscall_exit)) {
			const struct argus_ev_syscall_exit *e = rec;
			r->nr = e->nr;
			r->val = e->ret;
		} else {
			const struct argus_ev_syscall_exit_short *e = rec;
			r->nr = e->nr;
			r->val = e->ret;
		}
		break;
	}
	case ARGUS_EV_FORK: {
		const struct argus_ev_fork *e = rec;
		r->peer_pid = e->child_pid;
		r->peer_tid = e->child_tid;
		memcpy(r->comm, e->comm, sizeof r->comm);
		break;
	}
	case ARGUS_EV_EXEC:
	case ARGUS_EV_THREAD_NAME:
		memcpy(r->comm, ((const struct argus_ev_comm *)rec)->comm, sizeof r->comm);
		break;
	case ARGUS_EV_EXIT: {
		const struct argus_ev_exit *e = rec;
		r->val = e->exit_code;
		r->state = e->is_group_leader != 0;
		break;
	}
	case ARGUS_EV_PROC_SNAPSHOT: {
		const struct argus_ev_proc_snapshot *e = rec;
		r->peer_pid = e->ppid;
		r->state = e->is_main_thread != 0;
		memcpy(r->comm, e->comm, sizeof r->comm);
		break;
	}
	case ARGUS_EV_DATA_FLAG_WRITE:
	case ARGUS_EV_DATA_FLAG_READ: {
		const struct argus_ev_data_flag *e = rec;
		r->obj = e->addr;
		r->val = (int64_t)e->value;
		r->obj2 = e->pc;
		break;
	}
	case ARGUS_EV_LOST: {
		const struct argus_ev_lost *e = rec;
		r->val = (int64_t)e->count;
		/* Records written before `kind` (32 bytes) are all drops (0). */
		if (h->size >= sizeof(*e))
			r->state = (uint8_t)e->kind;
		break;
	}
	case ARGUS_EV_DETAIL: {
		const struct argus_ev_detail *e = rec;
		r->state = e->tier;
		r->reason = e->mode;
		r->peer_tid = e->cause_tid;
		r->val = (int64_t)e->out_ns;
		break;
	}
	case ARGUS_EV_FD_INFO: {
		const struct argus_ev_fd_info *e = rec;
		r->aux = e->fd;
		r->state = e->kind;
		r->reason = e->family;
		r->nr = e->sock_type;
		r->obj = e->inode;
		r->obj2 = e->local;
		r->val = (int64_t)e->peer;
		break;
	}
	case ARGUS_EV_NET_IO: {         /* obj: widen_side */
		const struct argus_ev_net_io *e = rec;
		r->aux = e->fd;
		r->state = e->dir;
		r->reason = e->proto;
		r->irq = e->family;
		r->val = e->bytes;
		r->peer_tid = e->seq;
		r->peer_pid = e->local_port;
		r->nr = e->remote_port;
		r->obj2 = e->inode;
		break;
	}
	case ARGUS_EV_NET_IO_SHORT: {   /* a NET_IO row with no 4-tuple yet (tracer/netio.py) */
		const struct argus_ev_net_io_short *e = rec;
		r->type = ARGUS_EV_NET_IO;
		r->pad = 1;
		r->aux = e->fd;
		r->state = e->dir;
		r->reason = e->proto;
		r->val = e->bytes;
		r->peer_tid = e->seq;
		r->obj2 = e->inode;
		r->obj = UINT64_MAX;     /* no addresses in the frames side array */
		break;
	}
	case ARGUS_EV_TIMER: {
		const struct argus_ev_timer *e = rec;
		r->state = e->kind;
		r->reason = e->mode;
		r->nr = e->clockid;
		r->obj = e->timer_id;
		r->val = e->expires_ns;
		r->obj2 = e->arm_ts_ns;
		r->peer_pid = e->arm_pid;
		r->peer_tid = e->arm_tid;
		break;
	}
	case ARGUS_EV_CPU_SAMPLE: {
		const struct argus_ev_cpu_sample *e = rec;
		r->obj = e->user_stack_id;
		r->obj2 = e->kernel_stack_id;
		r->aux = e->period_us > INT32_MAX ? INT32_MAX : (int32_t)e->period_us;   /* a damaged record stays positive */
		r->state = e->in_kernel;
		break;
	}
	case ARGUS_EV_WAIT_SITE: {      /* obj, peer_tid: widen_side */
		const struct argus_ev_wait_site *e = rec;
		r->nr = e->syscall_nr;
		r->aux = e->timeout_ms;
		r->peer_pid = e->nfds;
		r->obj2 = e->site_id;
		break;
	}
	case ARGUS_EV_FUTEX_STATE: {
		const struct argus_ev_futex_state *e = rec;
		r->obj = e->uaddr;
		r->val = e->word;
		r->peer_tid = e->owner_field;
		r->nr = e->op;
		r->state = (uint8_t)e->flags;
		break;
	}
	case ARGUS_EV_FILE_LOCK: {
		const struct argus_ev_file_lock *e = rec;
		r->aux = e->fd;
		r->state = e->kind;
		r->reason = e->type;
		r->irq = e->holder_type;
		r->peer_tid = e->wait;
		r->nr = e->whence;
		r->val = e->start;
		r->obj2 = (uint64_t)e->len;
		r->obj = e->inode;
		r->peer_pid = e->holder_pid;
		break;
	}
	case ARGUS_EV_CALLBACK_BEGIN:
	case ARGUS_EV_CALLBACK_END:
	case ARGUS_EV_ENQUEUE:
	case ARGUS_EV_IPC_SEND:
	case ARGUS_EV_IPC_RECV:
	case ARGUS_EV_MUTEX_LOCK:
	case ARGUS_EV_MUTEX_UNLOCK:
	case ARGUS_EV_INPUT:
	case ARGUS_EV_PROBE_RETURN:
	case ARGUS_EV_GO_READY:
	case ARGUS_EV_GO_EXECUTE:
	case ARGUS_EV_GO_PARK: {
		const struct argus_ev_probe *e = rec;
		r->obj = e->obj;
		r->obj2 = e->fn;
		r->nr = e->probe_id;
		break;
	}
	case ARGUS_EV_GO_SNAPSHOT: {   /* the wait's text: widen_side */
		const struct argus_ev_go_snapshot *e = rec;
		r->obj = e->g;
		r->obj2 = e->wait_obj;
		r->val = e->wait_since_ns;
		r->nr = e->goid;
		r->aux = e->fd;
		r->state = e->status;
		r->reason = e->wait_reason;
		r->irq = e->flags;
		break;
	}
	}
}

/* A SWITCH record (schema v3) as the SWITCH_OUT record of prev and the
 * SWITCH_IN record of next it stands for, both with its ts and cpu.  Every
 * switch_out member is copied from the SWITCH member of the same name
 * (tracer/schema_test.py checks it), so widen() gives the rows the two
 * records would have given. */
void argus_split_switch(const struct argus_ev_switch *e, struct argus_ev_switch_out *o,
			struct argus_ev_switch_in *i)
{
	memset(o, 0, sizeof *o);
	memset(i, 0, sizeof *i);
	o->h = e->h;
	o->h.type = ARGUS_EV_SWITCH_OUT;
	o->h.size = sizeof *o;
	o->state = e->state;
	o->wait_reason = e->wait_reason;
	o->prio = e->prio;
	o->syscall_nr = e->syscall_nr;
	o->wait_obj = e->wait_obj;
	if (e->h.size >= sizeof *e)
		o->user_stack_id = e->user_stack_id;
	i->h = e->h;
	i->h.type = ARGUS_EV_SWITCH_IN;
	i->h.size = sizeof *i;
	i->h.pid = e->next_pid;
	i->h.tid = e->next_tid;
	i->prev_pid = e->h.pid;
	i->prev_tid = e->h.tid;
}

/* A SYSCALL record (schema v4) as the SYSCALL_ENTER (40-byte form) and
 * SYSCALL_EXIT (32-byte form) records it stands for: the enter with the
 * record's header, the exit exit_delta_ns later on the same cpu, with the
 * same nr.  Every enter member is copied from the SYSCALL member of the
 * same name (tracer/schema_test.py checks it), so widen() gives the rows
 * the two records would have given. */
void argus_split_syscall(const struct argus_ev_syscall *e, struct argus_ev_syscall_enter_short *enter,
			 struct argus_ev_syscall_exit_short *exit)
{
	memset(enter, 0, sizeof *enter);
	memset(exit, 0, sizeof *exit);
	enter->h = e->h;
	enter->h.type = ARGUS_EV_SYSCALL_ENTER;
	enter->h.size = sizeof *enter;
	enter->nr = e->nr;
	enter->aux = e->aux;
	enter->obj = e->obj;
	enter->obj2 = e->obj2;
	exit->h = e->h;
	exit->h.type = ARGUS_EV_SYSCALL_EXIT;
	exit->h.size = sizeof *exit;
	exit->h.ts_ns = e->h.ts_ns + e->exit_delta_ns;
	exit->nr = e->nr;
	exit->ret = e->ret;
}

/* One row from a validated record, unless the type mask leaves it out.
 * Returns 1 (a row), 0 (filtered) or -ENOMEM. */
static int add_row(struct decode_ctx *d, const void *rec, const struct argus_event_header *h)
{
	struct argus_decode_result *res = d->res;
	/* Masked by the row's type: a NET_IO_SHORT is a NET_IO row. */
	uint16_t row_type = h->type == ARGUS_EV_NET_IO_SHORT ? ARGUS_EV_NET_IO : h->type;

	if (d->type_mask && !(d->type_mask & (1ull << row_type)))
		return 0;
	if (res->nrows == d->cap && grow_rows(d) < 0)
		return -ENOMEM;
	widen(&res->rows[res->nrows], rec, h);
	if (widen_side(d, &res->rows[res->nrows], rec, h->size) < 0)
		return -ENOMEM;
	/* The NET_IO the call's record stands for (schema v6): tracer/netio.py
	 * rebuilds it and clears pad. */
	if (h->type == ARGUS_EV_SYSCALL_EXIT)
		res->rows[res->nrows].pad = h->flags & ARGUS_HF_NET_IO_MASK;
	if (h->ts_ns < res->first_window_ts)
		res->first_window_ts = h->ts_ns;
	res->nrows++;
	return 1;
}

/* File offset of the record being visited; tracks the chunk position. */
static uint64_t record_offset(struct decode_ctx *d, uint64_t chunk_seq, uint32_t size)
{
	uint64_t offset;

	if (!d->in_chunk || chunk_seq != d->chunk_seq) {
		d->in_chunk = true;
		d->drop_chunk = false;
		d->chunk_seq = chunk_seq;
		d->chunk_pos = 0;
	}
	offset = d->data_offset + (chunk_seq % d->nchunks) * d->chunk_size + d->chunk_pos;
	d->chunk_pos += size;
	return offset;
}

/* argus_rb_read visitor: validate one record frame and widen it into a row. */
static int decode_record(const void *rec, uint32_t size, uint64_t chunk_seq, void *arg)
{
	struct decode_ctx *d = arg;
	struct argus_decode_result *res = d->res;
	struct argus_event_header h;
	uint64_t offset;
	int rc;

	offset = record_offset(d, chunk_seq, size);
	if (d->drop_chunk)
		return 0;
	if (size < sizeof h) {
		note_bad_record(d, offset, "%u bytes left in the chunk, less than a %zu-byte record header",
				size, sizeof h);
		return 0;
	}
	memcpy(&h, rec, sizeof h);
	if (h.size != size || size % 8 || size > ARGUS_EVENT_MAX_SIZE) {
		note_bad_record(d, offset, "size %u (%s)", h.size,
				h.size < sizeof h ? "smaller than the record header" :
				h.size % 8 ? "not a multiple of 8" :
				h.size > ARGUS_EVENT_MAX_SIZE ? "larger than ARGUS_EVENT_MAX_SIZE" :
				"runs past the chunk's committed data");
		return 0;
	}
	if (h.type >= ARGUS_EV_TYPE_MAX || type_min_size[h.type] == 0) {
		res->unknown_records++;
		return 0;
	}
	if (size < type_min_size[h.type]) {
		note_bad_record(d, offset, "size %u, type %u needs at least %u", size, h.type,
				type_min_size[h.type]);
		return 0;
	}
	if (h.ts_ns < res->seen_first_ts)
		res->seen_first_ts = h.ts_ns;
	if (h.ts_ns > res->seen_last_ts)
		res->seen_last_ts = h.ts_ns;
	if (h.type == ARGUS_EV_SWITCH) {
		struct argus_ev_switch_out out;
		struct argus_ev_switch_in in;

		argus_split_switch(rec, &out, &in);
		rc = add_row(d, &out, &out.h);
		if (rc >= 0) {
			int rc_in = add_row(d, &in, &in.h);

			rc = rc_in < 0 ? rc_in : rc | rc_in;
		}
	} else if (h.type == ARGUS_EV_SYSCALL) {
		struct argus_ev_syscall_enter_short enter;
		struct argus_ev_syscall_exit_short exit;

		argus_split_syscall(rec, &enter, &exit);
		if (exit.h.ts_ns > res->seen_last_ts)
			res->seen_last_ts = exit.h.ts_ns;
		rc = add_row(d, &enter, &enter.h);
		if (rc >= 0) {
			int rc_exit = add_row(d, &exit, &exit.h);

			rc = rc_exit < 0 ? rc_exit : rc | rc_exit;
		}
	} else {
		rc = add_row(d, rec, &h);
	}
	if (rc < 0)
		return rc;
	if (rc)
		res->bytes += size;
	return 0;
}

/* The tracer writes a USER_STACK record at most once per (pid, stack id) and
 * second, and later waits name the stack by id only: a window keeps the stack
 * records of the seconds just before it, so a wait early in the window still
 * has its frames (older ones are rewritten in that span if still in use). */
#define STACK_LOOKBACK_NS (2ull * 1000000000ull)

/* Records that describe state rather than events: what a window needs from
 * before its start (thread and process names, fd identities, mappings, and
 * the stacks recent waits refer to). */
static bool kept_from_before_window(uint16_t type, uint64_t ts_ns, uint64_t since_ns)
{
	if (type == ARGUS_EV_USER_STACK || type == ARGUS_EV_KERNEL_STACK)
		return ts_ns + STACK_LOOKBACK_NS >= since_ns;
	return type == ARGUS_EV_PROC_SNAPSHOT || type == ARGUS_EV_THREAD_NAME ||
	       type == ARGUS_EV_FD_INFO || type == ARGUS_EV_MAPPING || type == ARGUS_EV_PROC_NS ||
	       type == ARGUS_EV_GO_SNAPSHOT;
}

/* argus_rb_read_window visitor for the chunks outside the window: only the
 * state records from before the window become rows (decode_record validates
 * them); every other record is skipped on its header alone, so corrupt
 * records there are not looked for. */
static int decode_outside_record(const void *rec, uint32_t size, uint64_t chunk_seq, void *arg)
{
	struct decode_ctx *d = arg;
	struct argus_event_header h;
	uint64_t first_window_ts = d->res->first_window_ts;
	int rc;

	if (size >= sizeof h) {
		memcpy(&h, rec, sizeof h);
		if (h.size == size && h.ts_ns < d->since_ns && kept_from_before_window(h.type, h.ts_ns, d->since_ns)) {
			rc = decode_record(rec, size, chunk_seq, arg);
			d->res->first_window_ts = first_window_ts;  /* not a window row */
			return rc;
		}
	}
	record_offset(d, chunk_seq, size);
	return 0;
}

/* ---- sorting ------------------------------------------------------------- */

/* rows[i] = old rows[perm[i]] for all i, in place; perm is consumed.  Used
 * only when a second row array cannot be allocated: cycles jump across the
 * whole array, several times slower than gather_rows. */
static void permute_rows_in_place(struct argus_row *rows, uint32_t *perm, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		if (perm[i] == i)
			continue;
		struct argus_row held = rows[i];
		uint64_t j = i;

		for (;;) {
			uint64_t k = perm[j];
			perm[j] = (uint32_t)j;
			if (k == i) {
				rows[j] = held;
				break;
			}
			rows[j] = rows[k];
			j = k;
		}
	}
}

/* Stable sort of *rows by ts_ns; may replace *rows.  Returns 0 or -errno. */
static int sort_rows(struct argus_row **rowsp, uint64_t n)
{
	struct argus_row *rows = *rowsp, *sorted_rows;
	uint64_t min_ts = UINT64_MAX, max_ts = 0;
	bool sorted = true;
	int rc = 0;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t ts = rows[i].ts_ns;
		if (i && ts < rows[i - 1].ts_ns)
			sorted = false;
		min_ts = ts < min_ts ? ts : min_ts;
		max_ts = ts > max_ts ? ts : max_ts;
	}
	if (sorted)
		return 0;
	if (n > UINT32_MAX)
		return -EFBIG;

	uint64_t *keys = alloc_big(n * 2 * sizeof *keys);
	uint32_t *idx = alloc_big(n * 2 * sizeof *idx);
	if (!keys || !idx) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint64_t i = 0; i < n; i++) {
		keys[i] = rows[i].ts_ns - min_ts;
		idx[i] = (uint32_t)i;
	}
	struct argus_radix_sort sort = { keys, keys + n, idx, idx + n };
	if (argus_radix_sort(&sort, n, max_ts - min_ts)) {
		rc = -ENOMEM;
		goto out;
	}
	uint32_t *perm = sort.idx;
	free(keys);
	keys = NULL;
	/* Gather: sequential writes, reads from as many streams as there were
	 * interleaved producers.  Costs a second row array for a moment. */
	sorted_rows = alloc_big(n * sizeof *sorted_rows);
	if (sorted_rows) {
		for (uint64_t i = 0; i < n; i++)
			sorted_rows[i] = rows[perm[i]];
		free(rows);
		*rowsp = sorted_rows;
	} else {
		permute_rows_in_place(rows, perm, n);
	}
out:
	free(keys);
	free(idx);
	return rc;
}

/* ---- entry points --------------------------------------------------------- */

int argus_decode_file(const char *path, struct argus_decode_result *res)
{
	return argus_decode_file_window(path, 0, UINT64_MAX, res);
}

int argus_decode_file_window(const char *path, uint64_t since_ns, uint64_t until_ns,
			     struct argus_decode_result *res)
{
	struct argus_decode_opts o = { .since_ns = since_ns, .until_ns = until_ns, .keep_state = 1 };

	return argus_decode_file_opts(path, &o, res);
}

_Static_assert(ARGUS_EV_TYPE_MAX <= 64, "type_mask has a bit per type");

int argus_decode_file_opts(const char *path, const struct argus_decode_opts *o,
			   struct argus_decode_result *res)
{
	uint64_t since_ns = o->since_ns, until_ns = o->until_ns, extra;
	bool whole = since_ns == 0 && until_ns == UINT64_MAX;
	struct argus_rb *rb = NULL;
	struct argus_rb_file_header *h;
	struct argus_rb_stats st;
	struct argus_rb_torn torn;
	struct decode_ctx d;
	int rc;

	memset(res, 0, sizeof *res);
	rc = argus_rb_open(path, 0, &rb);
	if (rc < 0) {
		snprintf(res->error, sizeof res->error, "%s", argus_rb_error(rb));
		argus_rb_close(rb);
		return rc;
	}
	h = argus_rb_header(rb);
	argus_rb_stats(rb, &st);

	memset(&d, 0, sizeof d);
	d.res = res;
	d.path = path;
	d.data_offset = h->data_offset;
	d.chunk_size = st.chunk_size;
	d.nchunks = st.nchunks;
	d.since_ns = since_ns;
	d.type_mask = o->type_mask;
	res->first_window_ts = UINT64_MAX;
	res->seen_first_ts = UINT64_MAX;
	/* Headroom for records a live producer commits while we read, but never
	 * more rows than the data area can hold records (the estimate comes
	 * from chunk headers, which a damaged file may have wrong): a record
	 * is at least 24 bytes, and a 48-byte SWITCH is two rows.
	 * A SWITCH or SYSCALL record is two rows (header extra_rows counts
	 * them since schema v3): the records present have about the share of
	 * them the records written had; 1/4 more rows when not counted.  A
	 * record is at most two rows, so the share is capped at 1: a damaged
	 * header's extra_rows cannot push the estimate out of range. */
	if (st.extra_rows && st.records_written) {
		uint64_t two_row = st.extra_rows < st.records_written ? st.extra_rows : st.records_written;
		extra = (uint64_t)((double)st.records_present * ((double)two_row / (double)st.records_written));
	} else
		extra = st.records_present / 4;
	d.cap = o->rows_hint ? o->rows_hint : st.records_present + extra + 1024;
	if (d.cap > st.nchunks * st.chunk_size / sizeof(struct argus_event_header))
		d.cap = st.nchunks * st.chunk_size / sizeof(struct argus_event_header) + 1;
	res->rows = alloc_big(d.cap * sizeof *res->rows);
	if (!res->rows) {
		rc = -ENOMEM;
		snprintf(res->error, sizeof res->error, "%s: out of memory for %llu rows", path,
			 (unsigned long long)d.cap);
		goto fail;
	}

	rc = argus_rb_read_window(rb, since_ns, until_ns, decode_record,
				  whole || !o->keep_state ? NULL : decode_outside_record, &d, &torn);
	res->torn_chunks = torn.chunks;
	res->torn_first_ts = torn.first_ts;
	res->torn_last_ts = torn.last_ts;
	if (rc < 0) {
		snprintf(res->error, sizeof res->error, "%s: reading chunks: %s", path, strerror(-rc));
		goto fail;
	}
	rc = sort_rows(&res->rows, res->nrows);
	if (rc < 0) {
		snprintf(res->error, sizeof res->error, "%s: sorting %llu rows: %s", path,
			 (unsigned long long)res->nrows, strerror(-rc));
		goto fail;
	}
	if (res->first_window_ts == UINT64_MAX)
		res->first_window_ts = 0;
	if (res->seen_first_ts == UINT64_MAX)
		res->seen_first_ts = 0;
	if (res->nrows) {
		res->first_ts = res->rows[0].ts_ns;
		res->last_ts = res->rows[res->nrows - 1].ts_ns;
	}
	/* Relaxed: counters of a header other processes may still update. */
	res->records_overwritten = __atomic_load_n(&h->records_overwritten, __ATOMIC_RELAXED);
	res->records_lost = __atomic_load_n(&h->records_lost, __ATOMIC_RELAXED);
	res->switches_unreported = __atomic_load_n(&h->switches_unreported, __ATOMIC_RELAXED);
	res->created_ns = h->created_ns;
	res->created_realtime_ns = h->created_realtime_ns;
	argus_rb_identity(rb, res->boot_id, res->hostname);
	argus_rb_close(rb);
	return 0;

fail:
	argus_rb_close(rb);
	argus_decode_free(res);
	return rc;
}

void argus_decode_free(struct argus_decode_result *res)
{
	if (!res)
		return;
	free(res->rows);
	res->rows = NULL;
	res->nrows = 0;
	free(res->frames);
	res->frames = NULL;
	res->nframes = 0;
	free(res->strings);
	res->strings = NULL;
	res->strings_len = 0;
}
