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
 * address, not the socket's).  The per-call state a continuing TCP call
 * needs is in this CPU's slot (net_io_slots), not behind a hash lookup; the
 * CPU's drop count is read from the stage control block the program holds.
 * The mode load stays at the enter: a pipe fd pays it there and nothing at
 * the exit (bench/bpf_prog_cost.py, pipe-only: equal to a build without
 * NET_IO within the noise), and caching "not a socket" per (fd, inode) in
 * the fd cache is not exact (an ext4 inode number can equal a sockfs one).
 * A connected TCP socket's 4-tuple is still compared on every call: it can
 * change under the same inode (connect(AF_UNSPEC), then connect again), and
 * the two loads it takes for IPv4 hit the line the ports come from.
 *
 * Sequence numbers are the kernel's own accounting after the call, under no
 * lock: write_seq (the next byte a send queues) and copied_seq (the next
 * byte a receive copies to user space), each minus the bytes moved.  Two
 * threads moving data on one socket at once may see each other's bytes in
 * that difference; a single writer or reader per direction, the common case,
 * gets exact numbers.
 *
 * Short records: a socket's 4-tuple is the same on every call, so writing
 * it each time made NET_IO most of a socket-heavy trace (redis: 4 records a
 * request, 88 bytes each, bytes/event 26 -> 43).  The full record is written
 * for a socket the first time a process moves bytes on it, again once its
 * last one is net_io_refresh_ns old (the ring overwrites old records: every
 * window longer than that still holds one per active socket), when its
 * 4-tuple changed (a reconnected UDP socket, an inode number reused after
 * the 32-bit counter wrapped), and always when the peer comes from the call
 * (an unconnected UDP socket).  Every other call gets a 40-byte
 * NET_IO_SHORT (struct argus_ev_net_io_short: inode, fd, dir, proto,
 * bytes, seq), which readers join to its socket's full record by (pid,
 * inode) (tracer/netio.py).  The last full record's time sits in an LRU
 * hash keyed by that same (process, inode), not by the struct sock
 * address: a short record is written only where a reader's join finds its
 * full record, and no kernel address goes into a map key.  A socket shared
 * by two processes gets a full record in each; an eviction costs one more
 * full record, never a wrong tuple.
 * Only the bytes were the cost (the BPF work is the same reads either way).
 *
 * Implied calls (schema v6): even short, the records kept redis 3-4 points
 * slower (bytes/event 25.9 -> 29.8).  A call that continues its thread's
 * chain on the socket -- its seq is the seq the thread's previous call in
 * the same direction ended at, per the chain word in net_io_seen -- writes
 * no record: its exit record's header.flags get the direction, and readers
 * rebuild the row from the enter (fd, inode), the exit (bytes) and the
 * chain's earlier rows (tracer/netio.py rebuild_implied).  Only when those
 * are certainly in the trace (net_io_lineage, the conditions at the skip
 * below); else the short record as before, which anchors the chain again.
 * docs/event-schema.md, "Implied rows".
 * A record of its own, not a field of the call's exit record: that is the
 * 48-byte SYSCALL rewritten in place from the enter (merge_syscall_exit) or
 * a 32-byte exit, sized for every traced call, and the seq alone would
 * grow each by 8 bytes while bytes, dir and inode would still need reading
 * back from the enter and exit rows.
 *
 * Included by argus_trace.bpf.c after channel.bpf.h (fd_file, file_sock).
 */
#ifndef ARGUS_NET_IO_BPF_H
#define ARGUS_NET_IO_BPF_H

#define MSG_PEEK 2                      /* include/linux/socket.h */

/* A full record at most this old spares the next calls of the socket theirs;
 * 0: every call gets a full record (the records before NET_IO_SHORT). */
const volatile __u64 net_io_refresh_ns = ARGUS_REFRESH_NS;

/* Test hook (ARGUS_NET_IO_VERIFY=1 in argusd's environment): an implied
 * call keeps its short record too, so that a reader checks every row it
 * rebuilds against the record (tracer/netio.py, tests/test_net_io.py). */
const volatile __u8 net_io_verify = 0;

/* net_io_seen's key: the socket's inode << 32 | the process's tgid.  8
 * bytes, not a struct of a 64-bit inode and the tgid: the lookup on every
 * socket call hashes and compares half as many bytes.  Only inodes below
 * 2^32 have an entry (sockets' come from get_next_ino, an unsigned int):
 * the entry serves only the short and implied records, whose inode field
 * has 32 bits; a socket with a wider inode gets a full record every call
 * and is never looked up. */
static __always_inline __u64 net_io_key(__u32 inode, __u32 tgid)
{
	return (__u64)inode << 32 | tgid;
}

/* What the last full record of a socket in a process said, and per
 * direction (ARGUS_NET_SEND - 1, ARGUS_NET_RECV - 1) the chain of its calls:
 * lineage << 32 | the seq the next call continues from (UDP: 0), one word
 * so that it is read and written whole; 0: none.  chain_ns: when the
 * chain's last record (NET_IO or NET_IO_SHORT) was written: a chain gets
 * one at least every net_io_refresh_ns, so a reader finds every call's
 * anchor less than that before it. */
struct net_io_seen {
	__u64 full_ns;               /* when it was written */
	__u64 addrs;                 /* both addresses, folded: a reconnected socket differs */
	__u32 ports;                 /* local << 16 | remote */
	__u32 pad;                   /* in a slot (net_io_slots): bit d, the slot advanced chain[d] */
	__u64 chain[2];
	__u64 chain_ns[2];
};

#define NIO_CPU_NONE 0xffffffffu

/* At the enter of a call on a TCP/UDP socket: whether its SYSCALL_ENTER
 * was staged, on which CPU, and the socket's inode (the enter's obj2). */
static __always_inline void net_io_note_enter(struct syscall_state *sc, bool recorded, __u64 inode)
{
	sc->nio_enter_cpu = recorded ? bpf_get_smp_processor_id() : NIO_CPU_NONE;
	sc->nio_enter_inode = inode;
}

/* The thread's lineage at a call that moves bytes on a socket, on this CPU
 * with this CPU's drop count: the same id as long as both are the same as
 * at the thread's last such call, else a new one.  So two calls of one
 * lineage ran on one CPU, and every record staged on it in between was
 * either output or is still staged with this call's own.  The id is the
 * tid (below 2^22, PID_MAX_LIMIT) and the thread's count of lineages in
 * the 10 bits above: never 0, never another thread's, and the thread's
 * own again only 1024 lineages later (a chain word is trusted for
 * net_io_refresh_ns only, and must match the call's seq as well).
 * The drop count is the control block's (h->c->drops, stage_drops): the
 * same count as the drops map, one load from a line the program already
 * holds instead of a map lookup per call; with no control block every call
 * starts a new lineage. */
static __always_inline __u32 net_io_lineage(struct syscall_state *sc, struct stage_hold *h, __u32 tid, __u32 cpu)
{
	__u64 drops_now = h->c ? h->c->drops : 0;
	__u32 id;

	if (h->c && sc->nio_lineage && sc->nio_cpu == cpu && sc->nio_drops == drops_now)
		return sc->nio_lineage;
	id = (tid & 0x3fffff) | ((sc->nio_lineage >> 22) + 1) << 22;
	sc->nio_lineage = id;
	sc->nio_cpu = cpu;
	sc->nio_drops = drops_now;
	return 0;        /* a new lineage: nothing before this call is in it */
}

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ARGUS_NET_IO_SEEN_ENTRIES);
	__type(key, __u64);          /* net_io_key() */
	__type(value, struct net_io_seen);
} net_io_seen SEC(".maps");

/* TCP's per-CPU front of net_io_seen.  The lookup of the LRU hash was the
 * largest part of a socket call's NET_IO cost (a call, a hash, a bucket
 * and an element line: ~20% of sys_exit on redis, bench/bpf_line_profile.py);
 * a per-CPU array is one inlined index into a line of this CPU's own.
 *
 * A slot holds one TCP socket's entry of one process (key: net_io_key, 0:
 * empty) as this CPU last saw it in net_io_seen, and goes on from there:
 * a call whose slot holds its key, fresh and with the socket's 4-tuple,
 * decides on the slot alone and advances the slot's chain, not the map's.
 * Any other TCP call decides on net_io_seen as before and then copies the
 * entry into its slot (evicting whatever key it held).  Why that is exact:
 *   - Chains.  A chain word names a lineage, and a lineage runs on one CPU
 *     (net_io_lineage), so the slot of that CPU is the only copy a call of
 *     it advances; the slot marks each direction it advanced (dirty bits).
 *     Every lineage's latest word is thus in its CPU's slot (dirty) or in
 *     the map, never older in the map than in use: a dirty slot writes its
 *     advanced words back (net_io_slot_back) before its key is decided from
 *     the map or another key takes the slot, and a full record that empties
 *     other CPUs' dirty slots clears the map's word of those directions.
 *     Another thread's bytes on the socket, on any CPU, move the seq and so
 *     break this thread's chain as the shared word did.
 *   - The full record.  The slot's full_ns is never later than the map's (a
 *     stale slot goes to the map, which may know a newer one), and its
 *     4-tuple is the map's: a full record that creates the entry or changes
 *     its 4-tuple first empties the slot of that key on every CPU
 *     (net_io_slots_forget), so no slot vouches for an older tuple.
 * UDP (seq always 0, chains kept only in net_io_seen, where any other
 * thread's call breaks them) never uses a slot. */
#define NET_IO_SLOTS 256                 /* per CPU, a power of two */
#define NET_IO_MAX_CPUS 4096             /* bound of the loop over CPUs (NR_CPUS of common configs) */

struct net_io_slot {
	__u64 key;
	struct net_io_seen v;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NET_IO_SLOTS);
	__type(key, __u32);
	__type(value, struct net_io_slot);
} net_io_slots SEC(".maps");

static __always_inline __u32 net_io_slot_of(__u64 key)
{
	/* socket inodes are consecutive: any mix of the low bits spreads them */
	return (__u32)((key * 0x9e3779b97f4a7c15ull) >> 56) & (NET_IO_SLOTS - 1);
}

struct net_io_forget_ctx {
	__u64 key;
	__u32 idx;
	__u32 dirty;             /* the dirty bits of the slots emptied */
};

static long net_io_forget_cpu(__u64 cpu, void *arg)
{
	struct net_io_forget_ctx *ctx = arg;
	struct net_io_slot *o;

	/* NULL past the last possible CPU (cpu >= nr_cpu_ids): done */
	o = bpf_map_lookup_percpu_elem(&net_io_slots, &ctx->idx, (__u32)cpu);
	if (!o)
		return 1;
	if (o->key == ctx->key) {
		ctx->dirty |= o->v.pad;
		o->key = 0;
	}
	return 0;
}

/* Empty the slot of key on every CPU: a full record changed its 4-tuple or
 * created its entry.  Another CPU may be reading its slot meanwhile; it then
 * decides on the tuple before the change, as a reader of net_io_seen racing
 * an in-place update does.  Returns the dirty bits of the slots emptied: the
 * map's words of those directions are older than the chains just lost. */
static __always_inline __u32 net_io_slots_forget(__u64 key, __u32 idx)
{
	struct net_io_forget_ctx ctx = { .key = key, .idx = idx };

	bpf_loop(NET_IO_MAX_CPUS, net_io_forget_cpu, &ctx, 0);
	return ctx.dirty;
}

/* A slot's chains of the directions it advanced (dirty bits in v.pad) back
 * into its key's entry of net_io_seen: before the slot is refilled or its
 * key is decided from the map, so that the map never keeps a word older than
 * the chain it stands for (net_io_slots, "Chains"). */
static __always_inline void net_io_slot_back(struct net_io_slot *slot, struct net_io_seen *seen)
{
	if (slot->v.pad & 1) {
		seen->chain[0] = slot->v.chain[0];
		seen->chain_ns[0] = slot->v.chain_ns[0];
	}
	if (slot->v.pad & 2) {
		seen->chain[1] = slot->v.chain[1];
		seen->chain_ns[1] = slot->v.chain_ns[1];
	}
}

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

/* Both ends' addresses as 16-byte words (network order, IPv4 v4-mapped). */
static __always_inline void net_io_addrs(struct sock *sk, __u16 family, __u8 *local, __u8 *remote)
{
	if (family == AF_INET) {
		put_v4_mapped(local, sk->__sk_common.skc_rcv_saddr);
		put_v4_mapped(remote, sk->__sk_common.skc_daddr);
	} else {
		put_v6(local, &sk->__sk_common.skc_v6_rcv_saddr);
		put_v6(remote, &sk->__sk_common.skc_v6_daddr);
	}
}

static __always_inline __u64 fold_addrs(const __u32 *l, const __u32 *r)
{
	/* Exact for IPv4 (words 0-2 are the v4-mapped prefix). */
	return (__u64)(l[0] ^ l[1] ^ l[2] ^ l[3]) << 32 | (r[0] ^ r[1] ^ r[2] ^ r[3]);
}

/* The slot now holds key's entry as net_io_seen has it after this call. */
static __always_inline void net_io_slot_fill(struct net_io_slot *slot, __u64 key, const struct net_io_seen *v)
{
	slot->key = key;
	slot->v.pad = 0;                 /* clean: the map holds its chains */
	slot->v.full_ns = v->full_ns;
	slot->v.addrs = v->addrs;
	slot->v.ports = v->ports;
	slot->v.chain[0] = v->chain[0];
	slot->v.chain[1] = v->chain[1];
	slot->v.chain_ns[0] = v->chain_ns[0];
	slot->v.chain_ns[1] = v->chain_ns[1];
}

/* A call on a socket whose full record (seen: net_io_seen's entry, or for
 * TCP the CPU's slot) is fresh and has the socket's 4-tuple: implied (no
 * record) when it continues its chain, else a short record. */
static __always_inline void net_io_continue(struct stage_hold *h, struct syscall_state *sc, struct net_io_seen *seen,
					    bool in_slot,
					    struct argus_event_header *exit_h, __u64 inode, __u32 seq, int fd, __u8 dir,
					    __u8 proto, long ret, __u64 pid_tgid, __u64 now, __u32 lineage, __u32 cpu,
					    __u64 word)
{
	struct argus_ev_net_io_short *s;
	__u32 d = (dir - 1) & 1;
	bool verify = false;

	/* Continuity: no record at all.  The reader rebuilds this call's
	 * NET_IO row from its SYSCALL_ENTER (fd, inode) and exit (bytes),
	 * flagged with dir, and the previous row of the same (thread, inode,
	 * dir), whose seq plus bytes is this call's seq (tracer/netio.py
	 * rebuild_implied).  Only when all of that is certainly in the trace:
	 * the exit and the enter staged, the enter on this CPU with this
	 * inode, and the previous call of the chain in this thread's lineage,
	 * its last record less than net_io_refresh_ns ago. */
	if (exit_h && lineage && sc->nio_enter_cpu == cpu && sc->nio_enter_inode == inode &&
	    seen->chain[d] == ((__u64)lineage << 32 | seq) && now - seen->chain_ns[d] < net_io_refresh_ns) {
		exit_h->flags = dir;
		seen->chain[d] = word;
		if (in_slot)
			seen->pad |= 1u << d;
		if (!net_io_verify)
			return;
		verify = true;
	}
	s = reserve(h, sizeof(*s));
	if (s) {
		s->inode = (__u32)inode;
		s->bytes = ret;
		s->seq = seq;
		s->fd = fd;
		s->dir = dir;
		s->proto = proto;
		fill_header(&s->h, ARGUS_EV_NET_IO_SHORT, sizeof(*s), pid_tgid >> 32, (__u32)pid_tgid, now);
		submit(h, s);
	}
	/* A short record starts the chain again; none breaks it. */
	if (!verify) {
		seen->chain[d] = s ? word : 0;
		seen->chain_ns[d] = now;
		if (in_slot)
			seen->pad |= 1u << d;
	}
}

/* At the exit of a call on a socket channel_of found to be TCP or UDP:
 * written after the call's exit record, with the exit's thread and ts (now).
 *
 * The continuity path (no record) is the one every call of a busy socket
 * takes, so it does only what its decision needs: the fd walked again, the
 * socket's ports, seq, inode and addresses (two loads for IPv4), the
 * lineage from the control block already held, and for TCP the CPU's slot
 * (net_io_slots), else one lookup of net_io_seen (8-byte key).  The
 * record's other fields are filled only on the paths that write one. */
static __always_inline void emit_net_io(struct stage_hold *h, struct pt_regs *regs, struct task_struct *cur,
					struct syscall_state *sc, __u8 nio, long ret, __u64 pid_tgid, __u64 now,
					struct argus_event_header *exit_h)
{
	struct argus_ev_net_io *e;
	struct net_io_seen *seen = NULL, cur_seen;
	struct net_io_slot *slot = NULL;
	struct net_io_seen *evicted;
	__u32 lost = 0;
	__u64 key;
	bool short_ok;
	__u32 idx;
	/* words: the verifier wants aligned stack accesses */
	__u32 local[4], remote[4];
	__u64 inode, addrs;
	struct tcp_sock *tp;
	struct sock *sk;
	struct file *f;
	__u16 family, local_port, remote_port;
	__u32 seq = 0, cpu, lineage, d, ports;
	__u64 next, word;
	__u8 dir, proto;
	int fd = (int)sc->obj;

	if (nio == ARGUS_NIO_NONE)
		return;
	dir = sc->wait_reason == ARGUS_WAIT_WRITE ? ARGUS_NET_SEND : ARGUS_NET_RECV;
	d = dir - 1;
	if (d > 1)
		return;
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
	proto = sk->sk_protocol;
	local_port = sk->__sk_common.skc_num;
	remote_port = bpf_ntohs(sk->__sk_common.skc_dport);
	if (proto == IPPROTO_TCP) {
		/* struct tcp_sock starts with its struct sock */
		tp = bpf_rdonly_cast(sk, bpf_core_type_id_kernel(struct tcp_sock));
		seq = (dir == ARGUS_NET_SEND ? tp->write_seq : tp->copied_seq) - (__u32)ret;
	}
	inode = f->f_inode ? f->f_inode->i_ino : 0;
	ports = (__u32)local_port << 16 | remote_port;
	cpu = bpf_get_smp_processor_id();
	lineage = net_io_lineage(sc, h, (__u32)pid_tgid, cpu);
	/* After this call a chain continues from the seq past its bytes: on
	 * this thread, in this lineage (0: the chain is broken). */
	next = proto == IPPROTO_TCP ? (__u32)(seq + (__u32)ret) : 0;
	word = sc->nio_lineage ? (__u64)sc->nio_lineage << 32 | next : 0;
	key = net_io_key((__u32)inode, pid_tgid >> 32);
	net_io_addrs(sk, family, (__u8 *)local, (__u8 *)remote);
	addrs = fold_addrs(local, remote);
	/* The peer of an unconnected UDP socket is the call's: never short.
	 * A short record has room for a 32-bit inode (sockets' come from
	 * get_next_ino; no other has an entry) and a 16-bit fd. */
	short_ok = (proto == IPPROTO_TCP || remote_port || nio == ARGUS_NIO_FD) && inode >> 32 == 0 && fd >= 0 &&
		   fd <= 0xffff;
	if (proto == IPPROTO_TCP && inode >> 32 == 0) {
		idx = net_io_slot_of(key);
		slot = bpf_map_lookup_elem(&net_io_slots, &idx);
		if (slot && short_ok && slot->key == key && now - slot->v.full_ns < net_io_refresh_ns &&
		    slot->v.ports == ports && slot->v.addrs == addrs) {
			net_io_continue(h, sc, &slot->v, true, exit_h, inode, seq, fd, dir, proto, ret, pid_tgid, now,
					lineage, cpu, word);
			return;
		}
	}
	if (inode >> 32 == 0)
		seen = bpf_map_lookup_elem(&net_io_seen, &key);
	if (slot && slot->key && slot->v.pad) {
		/* Its chains back to the map first: this key is decided
		 * there, or another one takes the slot. */
		if (slot->key == key)
			evicted = seen;
		else
			evicted = bpf_map_lookup_elem(&net_io_seen, &slot->key);
		if (evicted)
			net_io_slot_back(slot, evicted);
		slot->v.pad = 0;
	}
	if (seen && short_ok && now - seen->full_ns < net_io_refresh_ns && seen->ports == ports &&
	    seen->addrs == addrs) {
		net_io_continue(h, sc, seen, false, exit_h, inode, seq, fd, dir, proto, ret, pid_tgid, now, lineage, cpu,
				word);
		if (slot)
			net_io_slot_fill(slot, key, seen);
		return;
	}
	e = reserve(h, sizeof(*e));
	if (!e) {
		if (seen)
			seen->chain[d & 1] = 0;
		if (slot && slot->key == key)
			slot->key = 0;
		return;
	}
	e->fd = fd;
	e->dir = dir;
	e->proto = proto;
	e->family = family;
	e->reserved = 0;
	e->bytes = ret;
	e->seq = seq;
	e->local_port = local_port;
	e->remote_port = remote_port;
	e->reserved2 = 0;
	e->inode = inode;
	__builtin_memcpy(e->local_addr, local, sizeof(local));
	__builtin_memcpy(e->remote_addr, remote, sizeof(remote));
	if (proto != IPPROTO_TCP && !remote_port && nio != ARGUS_NIO_FD)
		net_io_user_peer(e, regs, nio);
	fill_header(&e->h, ARGUS_EV_NET_IO, sizeof(*e), pid_tgid >> 32, (__u32)pid_tgid, now);
	submit(h, e);
	if (inode >> 32)
		return;          /* no entry: see net_io_key */
	/* A new entry or a new 4-tuple: no CPU's slot may still vouch for the
	 * old one (net_io_slots). */
	if (!seen || seen->ports != ports || seen->addrs != addrs)
		lost = net_io_slots_forget(key, net_io_slot_of(key));
	/* In place when the socket has an entry: replacing it would put back
	 * the other direction's chain as read here, maybe older than a write
	 * another CPU makes meanwhile. */
	if (seen) {
		seen->full_ns = now;
		seen->addrs = addrs;
		seen->ports = ports;
		seen->chain[d & 1] = word;
		seen->chain_ns[d & 1] = now;
		/* the other direction's word may be older than a lost slot's chain */
		if (lost & (2u >> (d & 1)))
			seen->chain[(d & 1) ^ 1] = 0;
	} else {
		__builtin_memset(&cur_seen, 0, sizeof(cur_seen));
		cur_seen.full_ns = now;
		cur_seen.addrs = addrs;
		cur_seen.ports = ports;
		cur_seen.chain[d & 1] = word;
		cur_seen.chain_ns[d & 1] = now;
		bpf_map_update_elem(&net_io_seen, &key, &cur_seen, BPF_ANY);
	}
	if (slot)
		net_io_slot_fill(slot, key, seen ? seen : &cur_seen);
}

#endif /* ARGUS_NET_IO_BPF_H */
