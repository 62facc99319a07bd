/* SPDX-License-Identifier: Apache-2.0 */
/* Graph core: typed edges, vertex order, edge sort, lost regions (see argus_graph.c for the algorithm). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_graph_int.h"
#include "argus_radix_sort.h"

void push_edge(struct argus_graph *g, struct vec *v, int64_t src, int64_t dst, int type, int weak,
		      int64_t ts, int64_t src_ts, int64_t row, int ctx, uint64_t obj, int64_t wait_ns)
{
	struct edge *e = vec_push(v);

	if (!e) {
		g->oom = 1;
		return;
	}
	e->src = src;
	e->dst = dst;
	e->type = (uint8_t)type;
	e->weak = (uint8_t)weak;
	e->ts = ts;
	e->src_ts = src_ts;
	e->row = row;
	e->ctx = (int8_t)ctx;
	e->obj = obj;
	e->wait_ns = wait_ns;
	e->owner_kind = ARGUS_OWNER_NONE;
}

static int lock_like(const struct argus_graph *g, uint32_t pid, uint64_t uaddr, int64_t u)
{
	struct map_slot *s = map_find(&g->futex, ((uint64_t)pid << 32) | (uint32_t)u, uaddr);

	return s && s->val == (FU_WAIT | FU_WAKE);
}

void build_wake_edges(struct argus_graph *g)
{
	uint64_t k;

	for (k = 0; k < g->wakes.len; k++) {
		const struct wake *w = &VEC_AT(&g->wakes, struct wake, k);
		const struct seg *p = SG(g, w->prev);
		int keep = w->ctx == ARGUS_WAKE_TASK && w->waker_seg >= 0, weak = 0;

		if (w->go) {      /* the goroutine's readier, not the thread that woke the M */
			push_edge(g, &g->edges, w->waker_seg, w->dst, ARGUS_EDGE_WAKEUP, 0, w->ts, w->src_ts, w->row,
				  ARGUS_WAKE_TASK, w->go_obj, w->ts - p->end);
			continue;
		}

		if (!keep && w->ctx == ARGUS_WAKE_SOFTIRQ && w->waker_seg >= 0 && w->irq == ARGUS_IRQ_NET &&
		    (role(g, w->waker_cur_nr) & ARGUS_ROLE_SEND)) {
			keep = 1;
			g->st.loopback_edges++;
		}
		if (!keep) {
			g->st.culled_wakeups++;
			if (w->irq != ARGUS_IRQ_NONE)
				g->st.culled_by_irq[w->irq < 16 ? w->irq : ARGUS_IRQ_OTHER]++;
			else
				g->st.culled_by_ctx[(uint8_t)w->ctx < 8 ? w->ctx : 7]++;
			continue;
		}
		{
			uint32_t ppid = TH(g, p->utid)->pid;
			uint32_t spid = TH(g, SG(g, w->waker_seg)->utid)->pid;

			if (p->wait_reason == ARGUS_WAIT_FUTEX && (role(g, w->waker_last_nr) & ARGUS_ROLE_FUTEX) &&
			    (w->waker_last_aux & FUTEX_OP_MASK) == 1 && w->waker_last_obj == p->wait_obj &&
			    ppid == spid)
				weak = lock_like(g, ppid, p->wait_obj, w->waker_utid) &&
				       lock_like(g, ppid, p->wait_obj, w->wakee_utid);
		}
		g->st.weak_edges += weak;
		push_edge(g, &g->edges, w->waker_seg, w->dst, ARGUS_EDGE_WAKEUP, weak, w->ts, w->ts, w->row, w->ctx,
			  p->wait_obj, w->ts - p->end);
	}
	vec_free(&g->wakes);
}

void build_spawn_edges(struct argus_graph *g)
{
	struct map seen;
	uint64_t k;

	if (map_init(&seen, 64))
		return (void)(g->oom = 1);
	for (k = 0; k < g->spawns.len; k++) {
		const struct spawn *sp = &VEC_AT(&g->spawns, struct spawn, k);
		int ins;

		if (sp->src < 0 || sp->dst < 0 || sp->src == sp->dst)
			continue;
		if (!map_upsert(&seen, (uint64_t)sp->src, (uint64_t)sp->dst, 0, &ins)) {
			g->oom = 1;
			break;
		}
		if (ins)
			push_edge(g, &g->edges, sp->src, sp->dst, ARGUS_EDGE_SPAWN, 0, sp->ts, sp->ts, sp->row,
				  ARGUS_WAKE_TASK, 0, 0);
	}
	map_free(&seen);
	vec_free(&g->spawns);
}

/* Per (pid, addr): the last write -> the first read of another thread after it. */
void build_flag_edges(struct argus_graph *g)
{
	struct map last_write, observed, episode;
	struct vec lw;   /* last-write records: seg, utid, ts, row */
	uint64_t k;

	if (!g->flags.len)
		return;
	vec_init(&lw, sizeof(int64_t) * 4);
	if (map_init(&last_write, 64) || map_init(&observed, 64) || map_init(&episode, 64))
		return (void)(g->oom = 1);
	/* flags were pushed in row order, which is (ts, row) order */
	for (k = 0; k < g->flags.len; k++) {
		const struct flag *f = &VEC_AT(&g->flags, struct flag, k);
		uint64_t rk1 = ((uint64_t)f->pid << 32) | (uint32_t)f->utid;
		struct map_slot *s, *o, *ep;
		int64_t *w;
		int ins;

		if (f->write) {
			s = map_upsert(&last_write, (uint64_t)f->pid, f->addr, -1, &ins);
			if (!s)
				break;
			if (ins) {
				if (!vec_push(&lw))
					break;
				s->val = (int64_t)lw.len - 1;
			}
			w = &VEC_AT(&lw, int64_t, s->val * 4);
			w[0] = f->seg;
			w[1] = f->utid;
			w[2] = f->ts;
			w[3] = f->row;
			continue;
		}
		ep = map_upsert(&episode, rk1, f->addr, INT64_MIN, &ins);
		if (!ep)
			break;
		if (ep->val == INT64_MIN)
			ep->val = f->ts;
		s = map_find(&last_write, (uint64_t)f->pid, f->addr);
		if (!s)
			continue;
		w = &VEC_AT(&lw, int64_t, s->val * 4);
		o = map_upsert(&observed, rk1, f->addr, -1, &ins);
		if (!o)
			break;
		if (w[1] == f->utid || o->val == w[3])
			continue;
		o->val = w[3];
		if (w[0] != f->seg)
			push_edge(g, &g->edges, w[0], f->seg, ARGUS_EDGE_DATA_FLAG, 0, f->ts, w[2], f->row, -1,
				  f->addr, f->ts - ep->val);
		ep->val = INT64_MIN;   /* the episode ends */
	}
	if (k < g->flags.len)
		g->oom = 1;
	map_free(&last_write);
	map_free(&observed);
	map_free(&episode);
	vec_free(&lw);
}

/* Segment order (utid, creation) and the remap creation id -> final id. */
int order_segments(struct argus_graph *g)
{
	uint64_t n = g->seg.len, nt = g->thr.len, k;
	int64_t *base = calloc(nt + 1, sizeof(int64_t));

	g->remap = malloc((n ? n : 1) * sizeof(int64_t));
	if (!base || !g->remap) {
		free(base);
		return -1;
	}
	for (k = 0; k < n; k++)
		base[SG(g, k)->utid + 1]++;
	for (k = 0; k < nt; k++)
		base[k + 1] += base[k];
	for (k = 0; k < n; k++)
		g->remap[k] = base[SG(g, k)->utid]++;
	free(base);
	return 0;
}

/* Per utid, the first final segment id: lo[u] .. lo[u + 1]. */
static int64_t *thread_seg_lo(struct argus_graph *g)
{
	uint64_t n = g->seg.len, nt = g->thr.len, k;
	int64_t *lo = calloc(nt + 1, sizeof(int64_t));

	if (!lo)
		return NULL;
	for (k = 0; k < n; k++)
		lo[SG(g, k)->utid + 1]++;
	for (k = 0; k < nt; k++)
		lo[k + 1] += lo[k];
	return lo;
}

/* The final id of utid's last segment starting at or before ts, or -1. */
static int64_t seg_at(struct argus_graph *g, const int64_t *lo, const int64_t *inv, int64_t utid, int64_t ts)
{
	int64_t a = lo[utid], b = lo[utid + 1];

	if (a == b || SG(g, inv[a])->start > ts)
		return -1;
	while (b - a > 1) {
		int64_t m = a + (b - a) / 2;

		if (SG(g, inv[m])->start <= ts)
			a = m;
		else
			b = m;
	}
	return a;
}

/* Timer edges from TIMER fire records: the arming thread's segment at the
 * arm time (binary search over its segments in final order) -> the segment
 * the expiry's wakeup started.  An arm in the segment just before (a thread's
 * own sleep or timeout) is program order already and makes no edge. */
static int resolve_timer_edges(struct argus_graph *g, const int64_t *lo, const int64_t *inv)
{
	uint64_t k;

	for (k = 0; k < g->treqs.len; k++) {
		const struct treq *q = &VEC_AT(&g->treqs, struct treq, k);
		int64_t a = seg_at(g, lo, inv, q->arm_utid, q->arm_ts), dst = g->remap[q->dst];

		if (a < 0)
			continue;          /* armed before the thread's first segment */
		if (a == dst || (a + 1 == dst && SG(g, inv[a])->utid == SG(g, q->dst)->utid) ||
		    (SG(g, q->dst)->flags & SF_TIMER_FD))
			continue;          /* program order, or the timerfd read already linked it */
		push_edge(g, &g->edges, inv[a], q->dst, ARGUS_EDGE_TIMER, 0, q->ts, q->arm_ts, q->row, -1, q->obj, 0);
		g->st.timer_edges++;
	}
	vec_free(&g->treqs);
	return g->oom ? -1 : 0;
}

/* Ownership edges (argus_graph_owners.c): the holder's segment running at,
 * or last started before, the victim's wait -> the victim's vertex. */
static int resolve_owner_edges(struct argus_graph *g, const int64_t *lo, const int64_t *inv)
{
	uint64_t k;

	for (k = 0; k < g->oreqs.len; k++) {
		const struct oreq *q = &VEC_AT(&g->oreqs, struct oreq, k);
		int64_t a = seg_at(g, lo, inv, q->holder, q->ts);
		struct edge *e;

		if (a < 0 || inv[a] == q->dst)
			continue;
		push_edge(g, &g->edges, inv[a], q->dst, ARGUS_EDGE_OWNERSHIP, q->weak, q->ts, q->ts, q->row, -1,
			  q->obj, 0);
		if (g->oom)
			break;
		e = &VEC_AT(&g->edges, struct edge, g->edges.len - 1);
		e->owner_kind = q->kind;
		g->st.ownership_edges++;
	}
	vec_free(&g->oreqs);
	return g->oom ? -1 : 0;
}

/* Program-order edges, remap every edge, sort by (ts, type, src). */
int finish_edges(struct argus_graph *g)
{
	uint64_t n = g->seg.len, k, ne;
	int64_t *inv = malloc((n ? n : 1) * sizeof(int64_t)), *lo;
	struct argus_radix_sort sort;
	uint64_t *keys;
	uint32_t *idx;
	struct edge *sorted;
	int64_t tmin = INT64_MAX, tmax = INT64_MIN;
	uint64_t maxsrc = 0;
	size_t sorted_mapped = 0;

	if (!inv)
		return -1;
	for (k = 0; k < n; k++)
		inv[g->remap[k]] = (int64_t)k;
	for (k = 0; k + 1 < n; k++) {
		const struct seg *v = SG(g, inv[k]), *w = SG(g, inv[k + 1]);

		if (v->utid != w->utid)
			continue;
		push_edge(g, &g->edges, inv[k], inv[k + 1], ARGUS_EDGE_PROGRAM_ORDER,
			  w->start_kind == ARGUS_START_SPLIT, w->start, v->end, -1, -1, 0, 0);
		g->st.weak_program_order += w->start_kind == ARGUS_START_SPLIT;
	}
	if (g->treqs.len || g->oreqs.len) {    /* the per-thread index only serves these */
		lo = thread_seg_lo(g);
		if (!lo || resolve_timer_edges(g, lo, inv) || resolve_owner_edges(g, lo, inv)) {
			free(lo);
			free(inv);
			return -1;
		}
		free(lo);
	}
	free(inv);
	for (k = 0; k < g->msg_edges.len; k++) {
		struct edge *e = vec_push(&g->edges);

		if (!e)
			return -1;
		*e = VEC_AT(&g->msg_edges, struct edge, k);
	}
	vec_free(&g->msg_edges);
	if (g->oom)
		return -1;
	ne = g->edges.len;
	for (k = 0; k < ne; k++) {
		struct edge *e = &VEC_AT(&g->edges, struct edge, k);

		e->src = rm(g, e->src);
		e->dst = rm(g, e->dst);
		if (e->ts < tmin)
			tmin = e->ts;
		if (e->ts > tmax)
			tmax = e->ts;
		if ((uint64_t)e->src > maxsrc)
			maxsrc = (uint64_t)e->src;
	}
	if (!ne)
		return 0;
	if (ne > UINT32_MAX)    /* the sort's 32-bit indexes: ~200 GiB of edges */
		return -1;
	keys = malloc(2 * ne * sizeof(*keys));
	idx = malloc(2 * ne * sizeof(*idx));
	sorted = big_alloc(ne * sizeof(*sorted), &sorted_mapped);
	if (!keys || !idx || !sorted)
		goto fail;
	for (k = 0; k < ne; k++) {
		keys[k] = (uint64_t)VEC_AT(&g->edges, struct edge, k).src;
		idx[k] = (uint32_t)k;
	}
	sort = (struct argus_radix_sort){ keys, keys + ne, idx, idx + ne };
	if (argus_radix_sort(&sort, ne, maxsrc))
		goto fail;
	for (k = 0; k < ne; k++) {
		const struct edge *e = &VEC_AT(&g->edges, struct edge, sort.idx[k]);

		sort.keys[k] = ((uint64_t)(e->ts - tmin) << 3) | e->type;
	}
	if (argus_radix_sort(&sort, ne, ((uint64_t)(tmax - tmin) << 3) | 7))
		goto fail;
	for (k = 0; k < ne; k++)
		sorted[k] = VEC_AT(&g->edges, struct edge, sort.idx[k]);
	free(keys);
	free(idx);
	vec_free(&g->edges);
	g->edges.data = sorted;
	g->edges.len = g->edges.cap = ne;
	g->edges.mapped = sorted_mapped;
	return 0;
fail:
	free(keys);
	free(idx);
	big_free(sorted, sorted_mapped);
	return -1;
}

/* Gap flag: the segment's start or end falls in a lost region. */
void mark_gaps(struct argus_graph *g)
{
	uint64_t k, j, nl = g->lost.len;
	struct interval *lost = g->lost.data;

	if (g->cfg.head_gap_end >= 0) {
		struct interval *iv = vec_push(&g->lost);

		if (!iv)
			return (void)(g->oom = 1);
		lost = g->lost.data;
		/* keep it first: regions are in time order */
		memmove(lost + 1, lost, nl * sizeof(*lost));
		lost[0].utid = -1;
		lost[0].start = INT64_MIN;
		lost[0].end = g->cfg.head_gap_end;
		nl++;
	}
	g->st.lost_regions = nl;
	if (!nl)
		return;
	for (k = 0; k < g->seg.len; k++) {
		struct seg *s = SG(g, k);
		int hit = 0;

		for (j = 0; j < nl && !hit; j++) {
			/* regions are few (one per drain that lost records) */
			hit = (s->start >= lost[j].start && s->start <= lost[j].end) ||
			      (s->end >= lost[j].start && s->end <= lost[j].end);
		}
		if (hit) {
			s->flags |= 0x80;
			g->st.gap_segments++;
		}
	}
}
