/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * Fd and channel identity: the inode behind an fd (syscall_enter.obj2) and,
 * once per (pid, fd, inode) and refresh period, an FD_INFO record saying
 * what the fd is (socket ends, pipe, eventfd id, tty, ...), so the graph can
 * pair the two ends of a channel.  A two-slot per-thread cache in
 * syscall_state answers a thread that keeps talking on the same fds
 * without the LRU map.
 *
 * Included by argus_trace.bpf.c after the record helpers.
 */
#ifndef ARGUS_CHANNEL_BPF_H
#define ARGUS_CHANNEL_BPF_H

/* include/uapi/linux/stat.h */
#define S_IFMT 00170000
#define S_IFSOCK 0140000
#define S_IFREG 0100000
#define S_IFCHR 0020000
#define S_IFIFO 0010000

/* include/linux/socket.h, include/uapi/linux/magic.h, include/uapi/linux/major.h */
#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define ANON_INODE_FS_MAGIC 0x09041934
#define MINORBITS 20
#define TTY_MAJOR 4
#define TTYAUX_MAJOR 5
#define UNIX98_PTY_SLAVE_MAJOR 136     /* 136..143 */

struct fd_key {
	__u32 pid;
	__s32 fd;
	__u64 inode;
};

/* (pid, fd, inode) -> when its FD_INFO was last written. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ARGUS_FD_SEEN_ENTRIES);
	__type(key, struct fd_key);
	__type(value, __u64);
} fd_seen SEC(".maps");

struct chan_info {
	__u64 inode;
	__u64 local;
	__u64 peer;
	__u16 sock_type;
	__u8 kind;
	__u8 family;
};

/* Typed view of a kernel pointer read as a number (kernel 6.2+): loads
 * through it are plain faulting-safe loads, not one helper call per field,
 * which took ~150 ns off every read/write at seven fields. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/* The open file behind fd in task cur (the current task), or NULL.
 *
 * The slot fds[fd] is read as a plain load through a typed view, not with
 * bpf_probe_read_kernel: the helper call was 18% of sys_enter
 * (bench/bpf_line_profile.py).  The verifier types fdt->fd (a pointer to
 * pointers) as a number and allows no typed view of one `struct file *`,
 * so the view is a kernel struct that starts with one: struct
 * epoll_filefd { struct file *file; int fd; }, in every kernel's BTF since
 * epoll has existed.  A kernel without it takes the helper. */
static __always_inline struct file *fd_file(struct task_struct *cur, int fd)
{
	struct file **fds, *f = NULL;
	struct files_struct *files;
	struct epoll_filefd *slot;
	struct fdtable *fdt;

	files = cur->files;
	if (!files)
		return NULL;
	fdt = files->fdt;
	if (!fdt || fd < 0 || (unsigned int)fd >= fdt->max_fds)
		return NULL;
	fds = fdt->fd;
	if (bpf_core_type_exists(struct epoll_filefd)) {
		slot = bpf_rdonly_cast((void *)((__u64)fds + (__u64)(__u32)fd * sizeof(f)),
				       bpf_core_type_id_kernel(struct epoll_filefd));
		/* One 8-byte load: the struct is packed, and clang would read
		 * slot->file byte by byte, which the verifier refuses. */
		f = *(struct file **)slot;
		return f ? bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file)) : NULL;
	}
	if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f)
		return NULL;
	return bpf_rdonly_cast(f, bpf_core_type_id_kernel(struct file));
}

static __always_inline __u64 inet4_endpoint(__u32 addr_be, __u16 port)
{
	return (__u64)bpf_ntohl(addr_be) << 16 | port;
}

/* IPv6 addresses do not fit: fold into 47 bits, bit 63 set; v4-mapped
 * addresses take the IPv4 form so a dual-stack socket matches its peer. */
static __always_inline __u64 inet6_endpoint(const struct in6_addr *a, __u16 port)
{
	__u32 w[4];
	__u64 h;

	if (bpf_probe_read_kernel(w, sizeof(w), a))
		return port;
	if (!w[0] && !w[1] && w[2] == bpf_htonl(0xffff))
		return inet4_endpoint(w[3], port);
	h = (__u64)w[0] * 0x9e3779b97f4a7c15ull ^ (__u64)w[1] * 0xc2b2ae3d27d4eb4full ^
	    (__u64)w[2] * 0x165667b19e3779f9ull ^ (__u64)w[3] * 0x85ebca77c2b2ae63ull;
	return ((h & ((1ull << 47) - 1)) | (1ull << 47)) << 16 | port;
}

static __always_inline void describe_socket(struct file *f, struct chan_info *c)
{
	struct socket *sock = BPF_CORE_READ(f, private_data);
	struct sock *sk = BPF_CORE_READ(sock, sk), *peer;
	struct socket *peer_sock;

	if (!sk)
		return;
	c->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	c->sock_type = BPF_CORE_READ(sk, sk_type);
	switch (c->family) {
	case AF_UNIX:
		/* struct unix_sock starts with its struct sock; the peer's inode
		 * is the one its struct socket_alloc embeds. */
		peer = BPF_CORE_READ((struct unix_sock *)sk, peer);
		peer_sock = peer ? BPF_CORE_READ(peer, sk_socket) : NULL;
		if (peer_sock)
			c->peer = BPF_CORE_READ((struct socket_alloc *)peer_sock, vfs_inode.i_ino);
		break;
	case AF_INET:
		c->local = inet4_endpoint(BPF_CORE_READ(sk, __sk_common.skc_rcv_saddr),
					  BPF_CORE_READ(sk, __sk_common.skc_num));
		c->peer = inet4_endpoint(BPF_CORE_READ(sk, __sk_common.skc_daddr),
					 bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport)));
		break;
	case AF_INET6:
		c->local = inet6_endpoint(&sk->__sk_common.skc_v6_rcv_saddr,
					  BPF_CORE_READ(sk, __sk_common.skc_num));
		c->peer = inet6_endpoint(&sk->__sk_common.skc_v6_daddr,
					 bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport)));
		break;
	default:
		break;
	}
}

static __always_inline bool tty_major(__u32 major)
{
	return major == TTY_MAJOR || major == TTYAUX_MAJOR ||
	       (major >= UNIX98_PTY_SLAVE_MAJOR && major < UNIX98_PTY_SLAVE_MAJOR + 8);
}

/* Kind and identity of an open file (see struct argus_ev_fd_info). */
static __always_inline void describe_file(struct file *f, struct chan_info *c)
{
	struct inode *inode = BPF_CORE_READ(f, f_inode);
	umode_t mode = BPF_CORE_READ(inode, i_mode);
	struct eventfd_ctx *efd;
	const unsigned char *dname;
	char name[10] = {};

	c->inode = BPF_CORE_READ(inode, i_ino);
	c->local = c->inode;
	switch (mode & S_IFMT) {
	case S_IFSOCK:
		c->kind = ARGUS_FD_SOCKET;
		describe_socket(f, c);
		return;
	case S_IFIFO:
		c->kind = ARGUS_FD_PIPE;
		return;
	case S_IFCHR:
		c->kind = tty_major(BPF_CORE_READ(inode, i_rdev) >> MINORBITS) ? ARGUS_FD_TTY : ARGUS_FD_CHARDEV;
		return;
	default:
		break;
	}
	/* Every anonymous-inode file (eventfd, timerfd, epoll, ...) shares one
	 * inode: tell them apart by the file's name and identify an eventfd by
	 * its id, any other by its file. */
	if (BPF_CORE_READ(inode, i_sb, s_magic) == ANON_INODE_FS_MAGIC) {
		dname = BPF_CORE_READ(f, f_path.dentry, d_name.name);
		bpf_probe_read_kernel(name, sizeof(name), dname);
		if (name[0] == '[' && name[1] == 'e' && name[2] == 'v' && name[3] == 'e' && name[4] == 'n' &&
		    name[5] == 't' && name[6] == 'f' && name[7] == 'd' && name[8] == ']') {
			c->kind = ARGUS_FD_EVENTFD;
			efd = BPF_CORE_READ(f, private_data);
			c->local = (__u32)BPF_CORE_READ(efd, id);
		} else {
			c->kind = ARGUS_FD_ANON;
			c->local = kptr_id(ptr_bits(f));
		}
		return;
	}
	c->kind = (mode & S_IFMT) == S_IFREG ? ARGUS_FD_REGULAR : ARGUS_FD_OTHER;
}

/* The inode behind fd for syscall_enter.obj2, and an FD_INFO record when
 * this (pid, fd, inode) was not described in the last refresh period. */
static __always_inline struct fd_cache_slot *fd_cache_find(struct syscall_state *sc, int fd, __u64 inode)
{
	int i;

	if (!sc)
		return NULL;
	for (i = 0; i < FD_CACHE_SLOTS; i++)
		if (sc->fd_cache[i].fd == fd && sc->fd_cache[i].inode == inode)
			return &sc->fd_cache[i];
	return NULL;
}

static __always_inline void fd_cache_put(struct syscall_state *sc, int fd, __u64 inode, __u64 seen)
{
	struct fd_cache_slot *slot;
	__u32 i;

	if (!sc)
		return;
	slot = fd_cache_find(sc, fd, inode);
	if (!slot) {
		i = sc->fd_cache_next++ % FD_CACHE_SLOTS;
		if (i >= FD_CACHE_SLOTS)
			return;
		slot = &sc->fd_cache[i];
	}
	slot->fd = fd;
	slot->inode = inode;
	slot->seen_ns = seen;
}

/* include/uapi/linux/in.h, include/linux/net.h */
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define SOCK_STREAM 1
#define SOCK_DGRAM 2

/* The struct sock of a socket file, or NULL: plain loads (typed views). */
static __always_inline struct sock *file_sock(struct file *f)
{
	struct socket *sock;

	sock = bpf_rdonly_cast(f->private_data, bpf_core_type_id_kernel(struct socket));
	return sock ? sock->sk : NULL;
}

/* AF_INET / AF_INET6 when f is a TCP or UDP socket (NET_IO records), else 0.
 * Any other file costs one load of its inode's mode. */
static __always_inline __u8 inet_family_of(struct file *f)
{
	struct inode *inode = f->f_inode;
	struct sock *sk;
	__u16 family;

	if (!inode || (inode->i_mode & S_IFMT) != S_IFSOCK)
		return 0;
	sk = file_sock(f);
	if (!sk)
		return 0;
	family = sk->__sk_common.skc_family;
	if (family != AF_INET && family != AF_INET6)
		return 0;
	if (!(sk->sk_protocol == IPPROTO_TCP && sk->sk_type == SOCK_STREAM) &&
	    !(sk->sk_protocol == IPPROTO_UDP && sk->sk_type == SOCK_DGRAM))
		return 0;
	return family;
}

static __always_inline __u64 channel_of(struct stage_hold *h, struct task_struct *cur, struct syscall_state *sc,
					 __u32 pid, __u32 tid, int fd, __u64 now)
{
	struct argus_ev_fd_info *e;
	struct fd_cache_slot *slot;
	struct chan_info c = {};
	struct fd_key key = {};
	struct file *f;
	__u64 *seen;

	if (sc)
		sc->net_family = 0;
	f = fd_file(cur, fd);
	if (!f)
		return 0;
	if (sc)
		sc->net_family = inet_family_of(f);
	key.pid = pid;
	key.fd = fd;
	key.inode = f->f_inode ? f->f_inode->i_ino : 0;
	slot = fd_cache_find(sc, fd, key.inode);
	if (slot && now - slot->seen_ns <= ARGUS_REFRESH_NS)
		return key.inode;
	seen = bpf_map_lookup_elem(&fd_seen, &key);
	if (seen && now - *seen <= ARGUS_REFRESH_NS) {
		fd_cache_put(sc, fd, key.inode, *seen);
		return key.inode;
	}
	describe_file(f, &c);
	e = reserve(h, sizeof(*e));
	if (!e)
		return key.inode;     /* not marked seen: the next call tries again */
	bpf_map_update_elem(&fd_seen, &key, &now, BPF_ANY);
	fd_cache_put(sc, fd, key.inode, now);
	e->fd = fd;
	e->kind = c.kind;
	e->family = c.family;
	e->sock_type = c.sock_type;
	e->inode = c.inode;
	e->local = c.local;
	e->peer = c.peer;
	fill_header(&e->h, ARGUS_EV_FD_INFO, sizeof(*e), pid, tid, now);
	submit(h, e);
	return key.inode;
}

#endif /* ARGUS_CHANNEL_BPF_H */
