/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Decoder: ring buffer file -> one flat, time-sorted array of fixed-width rows.
 *
 * Algorithm: map the file read-only, validate the header, visit every readable
 * chunk (argus_rb_read), validate each record (known type, size in bounds,
 * payload at least as long as the type needs), widen it into a struct argus_row
 * and finally sort the rows by (ts_ns, chunk seq, position) so that records of
 * one producer keep their order when timestamps tie.
 *
 * Rows are what Python sees (numpy structured dtype in tracer/schema.py
 * mirrors this struct; a test checks the layout), so the graph builder never
 * creates one Python object per event.
 *
 * Field mapping per type (unused fields are 0; tracer/python/schema.py
 * ROW_FIELDS is the same map for Python, checked against widen()):
 *   SWITCH_OUT   state, reason=wait_reason, nr=syscall_nr, obj=wait_obj, aux=prio,
 *                obj2=user_stack_id (0: none)
 *   SWITCH_IN    peer_pid/peer_tid = previous task
 *   SWITCH       (schema v3, a record but never a row) the SWITCH_OUT row of
 *                header's task and the SWITCH_IN row of next_pid/next_tid,
 *                both as above, via argus_split_switch()
 *   SYSCALL      (schema v4, a record but never a row) the SYSCALL_ENTER row
 *                and the SYSCALL_EXIT row exit_delta_ns later, both as
 *                below, via argus_split_syscall()
 *   WAKEUP(_NEW) peer_pid/peer_tid = wakee, reason=context, irq=irq_kind,
 *                aux=irq_vec, obj=target_cpu
 *   SYSCALL_ENTER nr, aux, obj, obj2
 *   SYSCALL_EXIT nr, val=ret
 *   FORK         peer_pid/peer_tid = child, comm = child comm
 *   EXEC, THREAD_NAME comm
 *   EXIT         val=exit_code, state=is_group_leader
 *   PROC_SNAPSHOT peer_pid=ppid, state=is_main_thread, comm
 *   DATA_FLAG_*  obj=addr, val=value, obj2=pc
 *   LOST         val=count, state=kind (enum argus_lost_kind; 0 in 32-byte records)
 *   FD_INFO      aux=fd, state=kind, reason=family, nr=sock_type, obj=inode,
 *                obj2=local, val=peer
 *   TIMER        state=kind (fire), reason=mode, nr=clockid, obj=timer_id,
 *                val=expires_ns, obj2=arm_ts_ns, peer_pid/peer_tid = arming task
 *   USER_STACK   obj=index of the first frame in result->frames, aux=nframes,
 *                obj2=stack_id
 *   KERNEL_STACK as USER_STACK (frames are offsets from the kernel's _stext)
 *   CPU_SAMPLE   obj=user_stack_id, obj2=kernel_stack_id, aux=period_us, state=in_kernel
 *   MAPPING      obj=start, obj2=end, val=pgoff, aux=prot, nr=dev,
 *                peer_tid=offset of the NUL-terminated path in result->strings,
 *                peer_pid=path length
 *   WAIT_SITE    nr=syscall_nr, aux=timeout_ms, peer_pid=nfds, obj2=site_id,
 *                obj=index of the first kept fd in result->frames, peer_tid=nkept;
 *                each entry is (uint32)fd | (uint64)events << 32
 *   FUTEX_STATE  obj=uaddr, val=word, peer_tid=owner_field, nr=op, state=flags
 *   FILE_LOCK    aux=fd, state=kind, reason=type, peer_tid=wait, irq=holder_type,
 *                nr=whence, val=start, obj2=len, obj=inode, peer_pid=holder_pid
 *   NET_IO       aux=fd, state=dir, reason=proto, irq=family, val=bytes, peer_tid=seq,
 *                peer_pid=local_port, nr=remote_port, obj2=inode, obj=index of 4
 *                entries in result->frames: local_addr, then remote_addr (16 bytes each,
 *                network order, as in the record); pad=0
 *   SYSCALL_EXIT also pad=header.flags & ARGUS_HF_NET_IO_MASK: the dir of the NET_IO
 *                row the call stands for (schema v6), which tracer/netio.py rebuilds
 *                and then clears pad
 *   GO_SNAPSHOT  obj=g, obj2=wait_obj (hchan), val=wait_since_ns, nr=goid (low 32
 *                bits), state=status, reason=wait_reason, irq=flags, aux=fd,
 *                peer_tid=offset of the wait reason's text in result->strings,
 *                peer_pid=its length
 *   NET_IO_SHORT a NET_IO row with pad=1 and no 4-tuple: irq, peer_pid, nr 0 and
 *                obj=UINT64_MAX (tracer/netio.py copies them from the socket's
 *                full NET_IO row)
 *
 * Variable-length payloads (stack frames, paths) go to side arrays that rows
 * index, so rows stay fixed-width and Python views them without copying.
 */
#ifndef ARGUS_DECODE_H
#define ARGUS_DECODE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct argus_row {                 /* 80 bytes */
	uint64_t ts_ns;
	uint32_t pid;
	uint32_t tid;
	uint16_t type;
	uint16_t cpu;
	uint8_t state;
	uint8_t reason;
	uint8_t irq;
	uint8_t pad;
	uint32_t nr;
	uint32_t peer_pid;
	uint32_t peer_tid;
	int32_t aux;
	int64_t val;
	uint64_t obj;
	uint64_t obj2;
	char comm[16];
};

struct argus_decode_result {
	struct argus_row *rows;    /* malloc'd; free with argus_decode_free */
	uint64_t nrows;
	uint64_t bytes;            /* record bytes decoded */
	uint64_t torn_chunks;      /* chunks that changed while being read */
	uint64_t bad_records;      /* invalid records skipped (their chunk's tail is dropped) */
	uint64_t records_overwritten, records_lost;
	uint64_t first_ts, last_ts;
	uint64_t created_realtime_ns, created_ns;
	char error[256];           /* set when the return value is < 0; when it is 0 but
	                            * bad_records > 0, describes the first bad record */
	uint64_t unknown_records;  /* well-formed records of types this build does not know */
	uint64_t *frames;          /* user stack frames of all USER_STACK rows (malloc'd) */
	uint64_t nframes;
	char *strings;             /* NUL-terminated MAPPING paths (malloc'd) */
	uint64_t strings_len;
	uint64_t first_window_ts;  /* smallest ts of the rows from chunks in the window
	                            * (argus_decode_file: first_ts); 0 when none */
	uint64_t seen_first_ts;    /* smallest / largest ts of every valid record read, */
	uint64_t seen_last_ts;     /* rows or not (a type-filtered pass still sees the range) */
	uint64_t torn_first_ts;    /* time range of the torn chunks (their headers' first_ts / */
	uint64_t torn_last_ts;     /* last_ts at the snapshot); 0 when none */
	uint8_t boot_id[16];       /* the header's host identity (argus_rb_identity), */
	char hostname[65];         /* empty for a file older than it */
	uint64_t switches_unreported; /* header.switches_unreported: the kernel's holes, apart from records_lost */
};

/* A selective decode (argus_decode_file_opts). */
struct argus_decode_opts {
	uint64_t since_ns, until_ns;  /* chunks whose time range overlaps the window */
	uint64_t type_mask;        /* rows only of types with bit (1 << type) set; 0 = all */
	uint64_t rows_hint;        /* initial row capacity; 0 = from the chunk headers */
	int keep_state;            /* 1: plus the state records from before the window */
};

/* Returns 0, or -errno with result->error naming the problem (and file offset). */
int argus_decode_file(const char *path, struct argus_decode_result *result);
/*
 * The rows of the chunks whose time range (chunk header first_ts / last_ts)
 * overlaps [since_ns, until_ns] -- every record of such a chunk, even one
 * just outside the window -- plus, from the chunks before the window, the
 * state records (PROC_SNAPSHOT, THREAD_NAME, FD_INFO, MAPPING) with ts <
 * since_ns: a late window still names its threads and knows its fds and
 * mappings.  Chunks outside the window are only framed, never widened.  Records of one thread may sit in chunks of different
 * producers, but every chunk is time-bounded, so the selection is exact.
 * argus_decode_file is the window [0, UINT64_MAX].
 */
int argus_decode_file_window(const char *path, uint64_t since_ns, uint64_t until_ns,
			     struct argus_decode_result *result);
/*
 * The general form: argus_decode_file_window is {since, until, 0, 0, 1}.
 * With keep_state = 0 the chunks outside the window are not read at all, so
 * consecutive windows partition the records by chunk (a reader that keeps
 * only the rows with ts in its window sees every record exactly once: a
 * chunk's header time range covers its records).  type_mask filters rows
 * after validation: bad records and torn chunks are counted as without it.
 */
int argus_decode_file_opts(const char *path, const struct argus_decode_opts *opts,
			   struct argus_decode_result *result);
void argus_decode_free(struct argus_decode_result *result);

struct argus_ev_switch;
struct argus_ev_switch_out;
struct argus_ev_switch_in;
/* A SWITCH record (schema v3) as the SWITCH_OUT record of prev and the
 * SWITCH_IN record of next it stands for: what the decoder widens, and
 * what live readers of records (argusd's hang detector) read instead. */
void argus_split_switch(const struct argus_ev_switch *e, struct argus_ev_switch_out *out,
			struct argus_ev_switch_in *in);

struct argus_ev_syscall;
struct argus_ev_syscall_enter_short;
struct argus_ev_syscall_exit_short;
/* A SYSCALL record (schema v4) as the SYSCALL_ENTER and SYSCALL_EXIT
 * records it stands for, like argus_split_switch. */
void argus_split_syscall(const struct argus_ev_syscall *e, struct argus_ev_syscall_enter_short *enter,
			 struct argus_ev_syscall_exit_short *exit);

#ifdef __cplusplus
}
#endif
#endif /* ARGUS_DECODE_H */
