/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/*
 * NET_IO records (struct argus_ev_net_io): the bytes one read / write /
 * send / recv family call moved on a TCP or UDP socket, with the 4-tuple
 * seen from this end and, for TCP, the sequence number of the first byte,
 * so that a send on one host can be matched to the receive on another.
 *
 * Cost: sys_enter (channel_of) notes in syscall_state whether the call's fd
 * is an inet TCP/UDP socket, which costs any other fd one load of its
 * inode's mode; sys_exit reads the socket again only for those, and user
 * memory only for an unconnected UDP socket (its peer is the call's
 * address, not the socket's).
 *
 * Sequence numbers are the kernel's own accounting after the call, under no
 * lock: write_seq (the next byte a send queues) and copied_seq (the next
 * byte a receive copies to user space), each minus the bytes moved.  Two
 * threads moving data on one socket at once may see each other's bytes in
 * that difference; a single writer or reader per direction, the common case,
 * gets exact numbers.
 *
 * Included by argus_trace.bpf.c after channel.bpf.h (fd_file, file_sock).
 */
#ifndef ARGUS_NET_IO_BPF_H
#define ARGUS_NET_IO_BPF_H

#define MSG_PEEK 2                      /* include/linux/socket.h */

/* ::ffff:a.b.c.d, so IPv4 ends compare equal whatever their socket's family. */
static __always_inline void put_v4_mapped(__u8 *dst, __u32 addr_be)
{
	__u32 *w = (__u32 *)dst;

	w[0] = 0;
	w[1] = 0;
	w[2] = bpf_htonl(0xffff);
	w[3] = addr_be;
}

static __always_inline void put_v6(__u8 *dst, const struct in6_addr *a)
{
	__u32 *w = (__u32 *)dst;

	w[0] = a->in6_u.u6_addr32[0];
	w[1] = a->in6_u.u6_addr32[1];
	w[2] = a->in6_u.u6_addr32[2];
	w[3] = a->in6_u.u6_addr32[3];
}

/* An unconnected UDP socket talks to the address the call names: the
 * destination of sendto / sendmsg, the source recvfrom / recvmsg filled in.
 * Left zero when the call gave none or it is unreadable. */
static __always_inline void net_io_user_peer(struct argus_ev_net_io *e, struct pt_regs *regs, __u8 nio)
{
	struct {
		__u16 family;
		__be16 port;
		__u32 addr4;             /* sockaddr_in; sockaddr_in6 has flowinfo here */
	} s = {};
	__u64 uaddr = 0;

	if (nio == ARGUS_NIO_SOCKADDR)
		uaddr = PT_REGS_PARM5_SYSCALL(regs);
	else if (bpf_probe_read_user(&uaddr, sizeof(uaddr), (void *)PT_REGS_PARM2_SYSCALL(regs)))
		return;          /* struct user_msghdr starts with msg_name */
	if (!uaddr || bpf_probe_read_user(&s, sizeof(s), (void *)uaddr))
		return;
	if (s.family == AF_INET) {
		put_v4_mapped(e->remote_addr, s.addr4);
	} else if (s.family == AF_INET6) {
		if (bpf_probe_read_user(e->remote_addr, sizeof(e->remote_addr), (void *)(uaddr + 8)))
			return;
	} else {
		return;
	}
	e->remote_port = bpf_ntohs(s.port);
}

/* At the exit of a call on a socket channel_of found to be TCP or UDP:
 * written after the call's exit record, with the exit's thread and ts (now). */
static __always_inline void emit_net_io(struct stage_hold *h, struct pt_regs *regs, struct task_struct *cur,
					struct syscall_state *sc, __u8 nio, long ret, __u64 pid_tgid, __u64 now)
{
	struct argus_ev_net_io *e;
	struct tcp_sock *tp;
	struct sock *sk;
	struct file *f;
	__u16 family;
	__u8 dir;
	int fd = (int)sc->obj;

	if (nio == ARGUS_NIO_NONE)
		return;
	dir = sc->wait_reason == ARGUS_WAIT_WRITE ? ARGUS_NET_SEND : ARGUS_NET_RECV;
	/* A peek leaves the bytes to the receive that follows. */
	if (dir == ARGUS_NET_RECV && nio != ARGUS_NIO_FD &&
	    ((nio == ARGUS_NIO_SOCKADDR ? PT_REGS_PARM4_SYSCALL(regs) : PT_REGS_PARM3_SYSCALL(regs)) & MSG_PEEK))
		return;
	/* Again, not from the enter: another thread may have replaced the fd. */
	f = fd_file(cur, fd);
	if (!f)
		return;
	sk = file_sock(f);
	if (!sk)
		return;
	family = sk->__sk_common.skc_family;
	if (family != AF_INET && family != AF_INET6)
		return;
	e = reserve(h, sizeof(*e));
	if (!e)
		return;
	e->fd = fd;
	e->dir = dir;
	e->proto = sk->sk_protocol;
	e->family = family;
	e->reserved = 0;
	e->bytes = ret;
	e->local_port = sk->__sk_common.skc_num;
	e->remote_port = bpf_ntohs(sk->__sk_common.skc_dport);
	e->reserved2 = 0;
	e->inode = f->f_inode ? f->f_inode->i_ino : 0;
	if (family == AF_INET) {
		put_v4_mapped(e->local_addr, sk->__sk_common.skc_rcv_saddr);
		put_v4_mapped(e->remote_addr, sk->__sk_common.skc_daddr);
	} else {
		put_v6(e->local_addr, &sk->__sk_common.skc_v6_rcv_saddr);
		put_v6(e->remote_addr, &sk->__sk_common.skc_v6_daddr);
	}
	if (e->proto == IPPROTO_TCP) {
		/* struct tcp_sock starts with its struct sock */
		tp = bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct tcp_sock));
		e->seq = (dir == ARGUS_NET_SEND ? tp->write_seq : tp->copied_seq) - (__u32)ret;
	} else {
		e->seq = 0;
		if (!e->remote_port && nio != ARGUS_NIO_FD)
			net_io_user_peer(e, regs, nio);
	}
	fill_header(&e->h, ARGUS_EV_NET_IO, sizeof(*e), pid_tgid >> 32, (__u32)pid_tgid, now);
	submit(h, e);
}

#endif /* ARGUS_NET_IO_BPF_H */
