/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * File locks: fcntl F_SETLK(W) / F_OFD_SETLK(W) and flock(2) at sys_enter
 * (FILE_LOCK): range (start made absolute), type, inode, and the first
 * conflicting holder on the inode's kernel lock list, so a try that fails
 * names its holder even when the holder locked before tracing started.  The
 * result is the syscall's SYSCALL_EXIT.
 *
 * fcntl is called for many other commands (F_GETFL, F_SETFD, ...): those are
 * rejected by command before any map lookup, at entry and at exit
 * (fcntl_lock_cmd).
 *
 * Included by argus_trace.bpf.c after the fd-identity helpers (fd_file).
 */
#ifndef ARGUS_FILE_LOCK_BPF_H
#define ARGUS_FILE_LOCK_BPF_H

/* include/uapi/asm-generic/fcntl.h, include/uapi/linux/fcntl.h (64-bit ABI) */
#define F_SETLK 6
#define F_SETLKW 7
#define F_OFD_SETLK 37
#define F_OFD_SETLKW 38
#define F_RDLCK 0
#define F_WRLCK 1
#define F_UNLCK 2
#define SEEK_CUR 1
#define SEEK_END 2
/* include/uapi/asm-generic/fcntl.h: flock(2) operations */
#define LOCK_SH 1
#define LOCK_EX 2
#define LOCK_NB 4
#define LOCK_UN 8

#define S64_MAX 0x7fffffffffffffffll

/* Kernel lock list entries looked at for a conflicting holder. */
#define LOCK_HOLDER_SCAN 4

static __always_inline bool fcntl_lock_cmd(__u64 cmd)
{
	return cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW;
}

struct lock_req {
	__s64 start, end;        /* inclusive byte range */
	__u8 kind, type, wait, whence;
	void *owner;             /* POSIX: the files_struct; OFD and flock: the struct file */
};

/* The first lock on the inode held by another owner that conflicts with
 * req (overlapping range, one of the two a write lock), as the kernel's
 * list says: holder tgid and its lock type, or 0.  Kernels before 6.9 have
 * no struct file_lock_core: nothing is read there. */
static __always_inline __u32 lock_holder(struct file *f, const struct lock_req *req, __u8 *holder_type)
{
	struct file_lock_context *ctx;
	struct list_head *head, *pos;
	int i;

	if (!bpf_core_type_exists(struct file_lock_core) || req->type == ARGUS_LOCK_UNLOCK)
		return 0;
	ctx = BPF_CORE_READ(f, f_inode, i_flctx);
	if (!ctx)
		return 0;
	head = req->kind == ARGUS_LOCK_FLOCK ? &ctx->flc_flock : &ctx->flc_posix;
	pos = BPF_CORE_READ(head, next);
	for (i = 0; i < LOCK_HOLDER_SCAN; i++) {
		struct file_lock *fl;
		__u8 type;
		__s64 s, e;

		if (!pos || pos == head)
			break;
		/* flc_list is in struct file_lock_core c, the first member */
		fl = (struct file_lock *)((char *)pos - bpf_core_field_offset(struct file_lock_core, flc_list));
		type = BPF_CORE_READ(fl, c.flc_type);
		s = req->kind == ARGUS_LOCK_FLOCK ? 0 : BPF_CORE_READ(fl, fl_start);
		e = req->kind == ARGUS_LOCK_FLOCK ? S64_MAX : BPF_CORE_READ(fl, fl_end);
		if (BPF_CORE_READ(fl, c.flc_owner) != req->owner && s <= req->end && req->start <= e &&
		    (type == F_WRLCK || req->type == ARGUS_LOCK_WRITE)) {
			*holder_type = type == F_WRLCK ? ARGUS_LOCK_WRITE : ARGUS_LOCK_READ;
			return (__u32)BPF_CORE_READ(fl, c.flc_pid);
		}
		pos = BPF_CORE_READ(pos, next);
	}
	return 0;
}

/* struct flock { short l_type; short l_whence; off_t l_start; off_t l_len; pid_t l_pid; } */
static __always_inline bool read_flock(__u64 uptr, struct file *f, struct lock_req *req)
{
	struct {
		__s16 type;
		__s16 whence;
		__u32 pad;
		__s64 start;
		__s64 len;
	} fl;
	__s64 base = 0;

	if (!uptr || bpf_probe_read_user(&fl, sizeof(fl), (void *)uptr))
		return false;
	req->type = fl.type == F_RDLCK ? ARGUS_LOCK_READ : fl.type == F_WRLCK ? ARGUS_LOCK_WRITE : ARGUS_LOCK_UNLOCK;
	req->whence = (__u8)fl.whence;
	if (fl.whence == SEEK_CUR)
		base = BPF_CORE_READ(f, f_pos);
	else if (fl.whence == SEEK_END)
		base = BPF_CORE_READ(f, f_inode, i_size);
	req->start = base + fl.start;
	/* l_len 0 is "to the end of the file"; a negative one covers the bytes before start */
	if (fl.len > 0) {
		req->end = req->start + fl.len - 1;
	} else if (fl.len < 0) {
		req->end = req->start - 1;
		req->start += fl.len;
	} else {
		req->end = S64_MAX;
	}
	return true;
}

/* At sys_enter of a lock-setting fcntl or flock: a FILE_LOCK record. */
static __always_inline void emit_file_lock(struct stage_hold *h, struct pt_regs *regs, __u8 layout, __u64 inode,
					   __u32 pid, __u32 tid, __u64 ts)
{
	struct argus_ev_file_lock *e;
	struct lock_req req = {};
	__u64 a1 = PT_REGS_PARM2_SYSCALL(regs);
	int fd = (int)PT_REGS_PARM1_SYSCALL(regs);
	__u8 holder_type = 0;
	__u32 holder;
	struct file *f;

	f = fd_file(bpf_get_current_task_btf(), fd);
	if (!f)
		return;
	if (layout == ARGUS_SCL_FLOCK) {
		req.kind = ARGUS_LOCK_FLOCK;
		req.type = (a1 & LOCK_UN) ? ARGUS_LOCK_UNLOCK : (a1 & LOCK_EX) ? ARGUS_LOCK_WRITE : ARGUS_LOCK_READ;
		req.wait = !(a1 & LOCK_NB);
		req.end = S64_MAX;
		req.owner = f;
	} else {
		req.kind = (a1 == F_OFD_SETLK || a1 == F_OFD_SETLKW) ? ARGUS_LOCK_OFD : ARGUS_LOCK_POSIX;
		req.wait = a1 == F_SETLKW || a1 == F_OFD_SETLKW;
		if (!read_flock(PT_REGS_PARM3_SYSCALL(regs), f, &req))
			return;
		req.owner = req.kind == ARGUS_LOCK_POSIX ? (void *)bpf_get_current_task_btf()->files : (void *)f;
	}
	holder = lock_holder(f, &req, &holder_type);
	e = reserve(h, sizeof(*e));
	if (!e)
		return;
	e->fd = fd;
	e->kind = req.kind;
	e->type = req.type;
	e->wait = req.wait;
	e->whence = req.whence;
	e->start = req.start;
	e->len = req.end == S64_MAX ? 0 : req.end - req.start + 1;
	e->inode = inode;
	e->holder_pid = holder;
	e->holder_type = holder_type;
	e->pad[0] = e->pad[1] = e->pad[2] = 0;
	fill_header(&e->h, ARGUS_EV_FILE_LOCK, sizeof(*e), pid, tid, ts);
	submit(h, e);
}

#endif /* ARGUS_FILE_LOCK_BPF_H */
