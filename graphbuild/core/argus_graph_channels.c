/* SPDX-License-Identifier: Apache-2.0 */
/* Graph core: channel identities, channels learned from wakeups, message matching, timer fires
 * (see argus_graph.c for the algorithm). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_graph_int.h"

/* The process at the other end of (pid, fd), once a wakeup taught it; else -1. */
int64_t peer_of(const struct argus_graph *g, uint32_t pid, uint64_t fd)
{
	const struct map_slot *c = map_find(&g->channel, chan_key(pid, fd), 0);

	return c ? (int64_t)((uint64_t)c->val >> 32) : -1;
}

/* A process holding the channel end `local`, other than self when one is
 * known; self only when allow_self (a socket whose peer end self holds). */
static int64_t owner_of(const struct argus_graph *g, uint64_t local, uint32_t self, int allow_self)
{
	const struct map_slot *s = map_find(&g->owners, local, 0);
	uint32_t a, b;

	if (!s)
		return -1;
	a = (uint32_t)s->val;
	b = (uint32_t)((uint64_t)s->val >> 32);
	if (a && a != self)
		return a;
	if (b && b != self)
		return b;
	return allow_self ? (int64_t)self : -1;
}

/* The channel a message operation on (pid, fd) uses: the sends-map key
 * (k1, k2; k1 = UINT64_MAX when unknown) and the peer process (-1 when
 * unknown).  With an FD_INFO identity: a socket's send goes to its peer end,
 * a receive reads its local end, and the key is the pair (receiving end,
 * sending end): a server's accepted TCP sockets all have the listening
 * address as their local end, so that end alone would pair a client's send
 * with a read of any connection (unix sockets' ends are inodes, unique
 * anyway); one end alone when the other is unknown (an unconnected
 * datagram socket).  Pipes and eventfds are one shared object.
 * Without one, the channel learned from a wakeup.  Returns 0 when the fd is
 * known not to be a channel (regular file, tty, ...). */
int msg_channel(const struct argus_graph *g, uint32_t pid, uint64_t fd, uint64_t inode, int dir,
		       uint64_t *k1, uint64_t *k2, int64_t *peer)
{
	const struct map_slot *s = inode ? map_find(&g->fdinfo, chan_key(pid, fd), inode) : NULL;

	*k1 = UINT64_MAX;
	*k2 = 0;
	*peer = -1;
	if (s) {
		const struct fdi *f = &VEC_AT(&g->fdiv, struct fdi, s->val);

		if (f->kind == ARGUS_FD_SOCKET) {
			uint64_t key = dir == MSG_SEND ? f->peer : f->local;
			uint64_t other = dir == MSG_SEND ? f->local : f->peer;

			if (key) {
				*k1 = key;
				*k2 = other > 2 ? other : 1;   /* 1, 2: the one-end and pipe keys */
			}
			if (f->peer)
				*peer = owner_of(g, f->peer, pid, 1);
			return 1;
		}
		if (f->kind == ARGUS_FD_PIPE || f->kind == ARGUS_FD_EVENTFD) {
			*k1 = f->local;
			*k2 = 2;
			*peer = owner_of(g, f->local, pid, 0);
			return 1;
		}
		return 0;
	}
	if (dir == MSG_SEND) {
		*k1 = chan_key(pid, fd);
	} else {
		const struct map_slot *c = map_find(&g->channel, chan_key(pid, fd), 0);

		if (c)
			*k1 = (uint64_t)c->val;
	}
	*peer = peer_of(g, pid, fd);
	return 1;
}

void on_fd_info(struct argus_graph *g, const struct argus_row *r)
{
	int ins;
	struct map_slot *s = map_upsert(&g->fdinfo, chan_key(r->pid, (uint64_t)(uint32_t)r->aux), r->obj, -1, &ins);
	struct fdi *f;

	if (!s)
		return (void)(g->oom = 1);
	if (ins) {
		if (!vec_push(&g->fdiv))
			return (void)(g->oom = 1);
		s->val = (int64_t)g->fdiv.len - 1;
	}
	f = &VEC_AT(&g->fdiv, struct fdi, s->val);
	f->local = r->obj2;
	f->peer = (uint64_t)r->val;
	f->kind = r->state;
	if (!f->local)
		return;
	s = map_upsert(&g->owners, f->local, 0, 0, &ins);
	if (!s)
		return (void)(g->oom = 1);
	{
		uint32_t a = (uint32_t)s->val, b = (uint32_t)((uint64_t)s->val >> 32);

		if (a != r->pid && b != r->pid) {
			if (!a)
				a = r->pid;
			else
				b = r->pid;    /* keeps the first two holders (a fork shares ends) */
			s->val = (int64_t)(((uint64_t)b << 32) | a);
		}
	}
}

/* A user-visible hrtimer fired; remember who armed it for the wakeups it causes. */
void on_timer(struct argus_graph *g, const struct argus_row *r)
{
	const struct map_slot *a = map_find(&g->tid_map, r->peer_tid, 0);
	struct map_slot *s;
	struct tfire *f;
	int ins;

	if (!a)        /* an arming thread the trace never shows: nothing to link */
		return;
	s = map_upsert(&g->tfires, (uint32_t)r->obj, 0, -1, &ins);
	if (!s)
		return (void)(g->oom = 1);
	if (ins) {
		if (!vec_push(&g->tfirev))
			return (void)(g->oom = 1);
		s->val = (int64_t)g->tfirev.len - 1;
	}
	f = &VEC_AT(&g->tfirev, struct tfire, s->val);
	f->arm_utid = a->val;
	f->arm_ts = (int64_t)r->obj2;
	f->fire_ts = (int64_t)r->ts_ns;
}

/* A task sending woke a task receiving: the wakeup edge stands for that send
 * (no message edge: its send is marked matched), and without channel
 * identities the pair (A, X) <-> (B, Y) is learned as one channel.  k: the
 * waker; ps: the wakee's segment the wakeup ended.  Returns -1 when out of
 * memory (g->oom set), else 0. */
int learn_channel(struct argus_graph *g, const struct thr *k, uint32_t wakee_pid, const struct seg *ps)
{
	uint64_t a, b, k1, k2;
	int64_t peer;
	int ins1, ins2;
	struct map_slot *s1, *s2;

	if (!(role(g, k->cur_nr) & ARGUS_ROLE_MSG_SEND) || !(role(g, ps->wait_nr) & ARGUS_ROLE_MSG_RECV) ||
	    !(ps->flags & SF_KNOWN))
		return 0;
	a = chan_key(k->pid, k->cur_obj);
	b = chan_key(wakee_pid, ps->wait_obj);
	s1 = map_upsert(&g->channel, b, 0, (int64_t)a, &ins1);
	s2 = map_upsert(&g->channel, a, 0, (int64_t)b, &ins2);
	if (!s1 || !s2)
		return g->oom = 1, -1;
	s1->val = (int64_t)a;
	s2->val = (int64_t)b;
	g->st.learned_channels += ins1;
	if (msg_channel(g, k->pid, k->cur_obj, k->cur_obj2, MSG_SEND, &k1, &k2, &peer) && k1 != UINT64_MAX) {
		struct map_slot *sd = map_find(&g->sends, k1, k2);

		if (sd)
			VEC_AT(&g->sendv, struct send, sd->val).matched = 1;
	}
	return 0;
}

/* A hardirq timer wakeup that started segment dst: the expiry of a timer
 * some task armed (the TIMER fire record just before it, matched by the timer
 * id in the wakeup's aux) -> an arm -> fire edge request. */
void match_timer_wakeup(struct argus_graph *g, const struct argus_row *r, uint64_t i, int64_t dst)
{
	int64_t ts = (int64_t)r->ts_ns;
	const struct map_slot *fs = map_find(&g->tfires, (uint32_t)r->aux, 0);
	const struct tfire *f = fs ? &VEC_AT(&g->tfirev, struct tfire, fs->val) : NULL;
	struct treq *q;

	if (!f || f->fire_ts > ts || ts - f->fire_ts >= TIMER_WAKE_WINDOW_NS)
		return;
	q = vec_push(&g->treqs);
	if (!q)
		return (void)(g->oom = 1);
	q->arm_utid = f->arm_utid;
	q->arm_ts = f->arm_ts;
	q->dst = dst;
	q->ts = ts;
	q->row = (int64_t)i;
	q->obj = (uint32_t)r->aux;
}

/* A receive that returned data without blocking: match it to its channel's send. */
void match_message(struct argus_graph *g, int64_t u, const struct argus_row *r, uint64_t i)
{
	struct thr *t = TH(g, u);
	struct map_slot *s;
	struct send *sd;
	uint64_t k1, k2;
	int64_t peer;

	if (!msg_channel(g, t->pid, t->cur_obj, t->cur_obj2, MSG_RECV, &k1, &k2, &peer) || k1 == UINT64_MAX)
		return;
	s = map_find(&g->sends, k1, k2);
	if (!s)
		return;
	sd = &VEC_AT(&g->sendv, struct send, s->val);
	if (sd->matched || sd->seg == t->seg || sd->ts > (int64_t)r->ts_ns)
		return;
	sd->matched = 1;
	if (go_polled_receive(g, u, sd))
		return;
	/* one edge per (src, dst) pair: a wakeup from the sender's segment, or an
	 * earlier message from it, already links the two */
	if (SG(g, t->seg)->wake_src == sd->seg || (t->msg_edge_src == sd->seg && t->msg_edge_dst == t->seg))
		return;
	t->msg_edge_src = sd->seg;
	t->msg_edge_dst = t->seg;
	push_edge(g, &g->msg_edges, sd->seg, t->seg, ARGUS_EDGE_MESSAGE, 0, (int64_t)r->ts_ns, sd->ts,
		  (int64_t)i, ARGUS_WAKE_TASK, t->cur_obj, 0);
	g->st.message_edges++;
}
