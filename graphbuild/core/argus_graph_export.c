/* SPDX-License-Identifier: Apache-2.0 */
/* Graph core: counts, exports to numpy columns, CSR indexes, free (see argus_graph.c for the algorithm). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argus_graph_int.h"
#include "argus_radix_sort.h"

void argus_graph_counts(const struct argus_graph *g, struct argus_graph_counts *out)
{
	uint64_t i, owned = 0;

	memset(out, 0, sizeof(*out));
	out->segments = g->seg.len;
	out->edges = g->edges.len;
	out->threads = g->thr.len;
	out->running = g->running.len;
	out->runnable = g->runnable.len;
	out->yields = g->yields.len;
	out->flags = g->flags.len;
	if (g->owner)
		for (i = 0; i < g->thr.len; i++)
			owned += (uint64_t)VEC_AT(&g->thr, struct thr, i).nrows;
	out->thread_rows = owned;
	out->ppids = g->ppid.slots ? g->ppid.used : 0;
}

void argus_graph_stats(const struct argus_graph *g, struct argus_graph_stats *out)
{
	*out = g->st;
}

int argus_graph_export_segments(struct argus_graph *g, const struct argus_graph_seg_cols *c)
{
	uint64_t n = g->seg.len, k, nt = g->thr.len;
	int64_t *base = calloc(nt + 1, sizeof(int64_t));

	if (!base)
		return -1;
	for (k = 0; k < nt; k++)
		base[k + 1] = base[k] + TH(g, k)->nrows;
	for (k = 0; k < n; k++) {
		const struct seg *s = SG(g, k);
		int64_t d = g->remap[k];
		int blocked = s->end_kind == ARGUS_END_BLOCKED;
		const struct thr *t = TH(g, s->utid);

		c->utid[d] = s->utid;
		c->tid[d] = t->tid;
		c->pid[d] = t->pid;
		c->start[d] = s->start;
		c->end[d] = s->end;
		c->start_kind[d] = s->start_kind;
		c->start_ctx[d] = s->start_ctx;
		c->start_irq[d] = s->start_irq;
		c->start_row[d] = s->start_row;
		c->end_kind[d] = s->end_kind;
		c->wait_start[d] = blocked ? s->end : -1;
		c->wait_end[d] = blocked ? s->wait_end : -1;
		c->wait_ongoing[d] = !!(s->flags & SF_ONGOING);
		c->wait_known[d] = !!(s->flags & SF_KNOWN);
		c->wait_state[d] = s->wait_state;
		c->wait_reason[d] = s->wait_reason;
		c->wait_nr[d] = s->wait_nr;
		c->wait_obj[d] = s->wait_obj;
		c->wait_aux[d] = s->wait_aux;
		c->wait_timedout[d] = !!(s->flags & SF_TIMEDOUT);
		c->wait_done[d] = !!(s->flags & SF_DONE);
		c->cpu_ns[d] = s->cpu_ns;
		c->runnable_ns[d] = s->runnable_ns;
		c->preempts[d] = s->preempts;
		c->yields[d] = s->yields;
		c->nsyscalls[d] = s->nsyscalls;
		c->row_lo[d] = s->row_lo + base[s->utid];
		c->row_hi[d] = s->row_hi + base[s->utid];
		c->split_kind[d] = s->split_kind;
		c->gap[d] = !!(s->flags & 0x80);
		c->wait_site[d] = s->site;
		c->wait_stack[d] = s->stack;
		c->wait_timeout_ms[d] = s->timeout_ms;
		c->act_kind[d] = s->act_kind;
		c->act_ts[d] = s->act_kind ? s->act_ts : -1;
		c->act_obj[d] = s->act_obj;
		c->act_seg[d] = s->act_kind ? rm(g, s->act_seg) : -1;
		c->act_wakee[d] = s->act_kind ? s->act_wakee : -1;
	}
	free(base);
	vec_free(&g->seg);
	return 0;
}

int argus_graph_export_edges(struct argus_graph *g, const struct argus_graph_edge_cols *c)
{
	uint64_t n = g->edges.len, k;

	for (k = 0; k < n; k++) {
		const struct edge *e = &VEC_AT(&g->edges, struct edge, k);

		c->src[k] = e->src;
		c->dst[k] = e->dst;
		c->type[k] = e->type;
		c->weak[k] = e->weak;
		c->ts[k] = e->ts;
		c->src_ts[k] = e->src_ts;
		c->row[k] = e->row;
		c->ctx[k] = e->ctx;
		c->obj[k] = e->obj;
		c->wait_ns[k] = e->wait_ns;
		c->owner_kind[k] = e->owner_kind;
	}
	vec_free(&g->edges);
	return 0;
}

/* CSR index over n edges keyed by key[] (< nseg): ids sorted by (key,
 * order_ts, eid), or by (key, eid) when order_ts is NULL (the edges are
 * already in ts order for the in-index).  ptr has nseg + 1 entries. */
int argus_graph_csr(const int64_t *key, const int64_t *order_ts, uint64_t n, uint64_t nseg,
		    int64_t *ptr, int64_t *ids)
{
	struct argus_radix_sort sort;
	uint64_t *keys, k;
	uint32_t *idx;
	int64_t tmin = INT64_MAX, tmax = INT64_MIN;

	memset(ptr, 0, (nseg + 1) * sizeof(int64_t));
	for (k = 0; k < n; k++)
		ptr[key[k] + 1]++;
	for (k = 0; k < nseg; k++)
		ptr[k + 1] += ptr[k];
	if (!n)
		return 0;
	if (order_ts) {
		if (n > UINT32_MAX)    /* the sort's 32-bit indexes */
			return -1;
		keys = malloc(2 * n * sizeof(*keys));
		idx = malloc(2 * n * sizeof(*idx));
		if (!keys || !idx) {
			free(keys), free(idx);
			return -1;
		}
		for (k = 0; k < n; k++) {
			if (order_ts[k] < tmin)
				tmin = order_ts[k];
			if (order_ts[k] > tmax)
				tmax = order_ts[k];
		}
		for (k = 0; k < n; k++) {
			keys[k] = (uint64_t)(order_ts[k] - tmin);
			idx[k] = (uint32_t)k;
		}
		sort = (struct argus_radix_sort){ keys, keys + n, idx, idx + n };
		if (argus_radix_sort(&sort, n, (uint64_t)(tmax - tmin))) {
			free(keys), free(idx);
			return -1;
		}
		{
			int64_t *next = malloc(nseg * sizeof(int64_t) + 1);

			if (!next) {
				free(keys), free(idx);
				return -1;
			}
			memcpy(next, ptr, nseg * sizeof(int64_t));
			for (k = 0; k < n; k++)
				ids[next[key[sort.idx[k]]]++] = (int64_t)sort.idx[k];
			free(next);
		}
		free(keys);
		free(idx);
	} else {
		int64_t *next = malloc(nseg * sizeof(int64_t) + 1);

		if (!next)
			return -1;
		memcpy(next, ptr, nseg * sizeof(int64_t));
		for (k = 0; k < n; k++)
			ids[next[key[k]]++] = (int64_t)k;
		free(next);
	}
	return 0;
}

int argus_graph_export_threads(struct argus_graph *g, const struct argus_graph_thread_cols *c)
{
	uint64_t nt = g->thr.len, k;
	int64_t *next;

	c->thread_rows_ptr[0] = 0;
	for (k = 0; k < nt; k++) {
		const struct thr *t = TH(g, k);

		c->tid[k] = t->tid;
		c->pid[k] = t->pid;
		memcpy(c->comm + 16 * k, t->comm, 16);
		c->first_ts[k] = t->first_ts;
		c->start_ts[k] = t->start_ts;
		c->end_ts[k] = t->end_ts;
		c->created[k] = t->created;
		c->parent_utid[k] = t->parent_utid;
		c->snapshot_main[k] = t->snapshot_main;
		c->thread_rows_ptr[k + 1] = c->thread_rows_ptr[k] + t->nrows;
	}
	next = malloc((nt + 1) * sizeof(int64_t));
	if (!next)
		return -1;
	memcpy(next, c->thread_rows_ptr, (nt + 1) * sizeof(int64_t));
	for (k = 0; k < g->nrows; k++) {
		int32_t u = g->owner[k];

		if (u >= 0)
			c->thread_rows[next[u]++] = (int64_t)k;
	}
	free(next);
	big_free(g->owner, g->owner_mapped);
	g->owner = NULL;
	k = 0;
	if (g->ppid.slots) {
		uint64_t j;

		for (j = 0; j <= g->ppid.mask; j++) {
			const struct map_slot *s = &g->ppid.slots[j];

			if (s->k1 == UINT64_MAX)
				continue;
			c->ppid_pid[k] = (int64_t)s->k1;
			c->ppid_ppid[k] = s->val;
			k++;
		}
	}
	return 0;
}

/* Stable counting sort of fixed-size records by their first int64 (utid). */
static int sort_by_utid(struct vec *v, uint64_t nt)
{
	uint64_t n = v->len, k;
	int64_t *next = calloc(nt + 2, sizeof(int64_t));
	char *out = malloc((n ? n : 1) * v->esize);

	if (!next || !out) {
		free(next), free(out);
		return -1;
	}
	for (k = 0; k < n; k++)
		next[*(int64_t *)((char *)v->data + k * v->esize) + 1]++;
	for (k = 0; k < nt; k++)
		next[k + 1] += next[k];
	for (k = 0; k < n; k++) {
		const char *src = (char *)v->data + k * v->esize;

		memcpy(out + (next[*(const int64_t *)src]++) * v->esize, src, v->esize);
	}
	n = v->len;
	vec_free(v);
	v->data = out;
	v->len = v->cap = n;
	free(next);
	return 0;
}

int argus_graph_export_misc(struct argus_graph *g, const struct argus_graph_misc_cols *c)
{
	uint64_t nt = g->thr.len, k;

	/* Per thread, intervals / yields / flags were pushed in time order, so a
	 * stable sort by utid gives (utid, start) / (utid, ts) / (utid, ts, row). */
	if (sort_by_utid(&g->running, nt) || sort_by_utid(&g->runnable, nt) || sort_by_utid(&g->yields, nt))
		return -1;
	for (k = 0; k < g->running.len; k++) {
		const struct interval *iv = &VEC_AT(&g->running, struct interval, k);

		c->run_utid[k] = iv->utid;
		c->run_start[k] = iv->start;
		c->run_end[k] = iv->end;
	}
	for (k = 0; k < g->runnable.len; k++) {
		const struct interval *iv = &VEC_AT(&g->runnable, struct interval, k);

		c->rbl_utid[k] = iv->utid;
		c->rbl_start[k] = iv->start;
		c->rbl_end[k] = iv->end;
	}
	for (k = 0; k < g->yields.len; k++) {
		const struct yield *y = &VEC_AT(&g->yields, struct yield, k);

		c->yld_utid[k] = y->utid;
		c->yld_ts[k] = y->ts;
		c->yld_seg[k] = rm(g, y->seg);
	}
	/* flags: stable by utid (row order = (ts, row) order inside a thread) */
	{
		uint64_t n = g->flags.len, *cnt = calloc(nt + 1, sizeof(uint64_t));

		if (!cnt)
			return -1;
		for (k = 0; k < n; k++)
			cnt[VEC_AT(&g->flags, struct flag, k).utid + 1]++;
		for (k = 0; k < nt; k++)
			cnt[k + 1] += cnt[k];
		for (k = 0; k < n; k++) {
			const struct flag *fl = &VEC_AT(&g->flags, struct flag, k);
			uint64_t d = cnt[fl->utid]++;

			c->flg_row[d] = fl->row;
			c->flg_utid[d] = fl->utid;
			c->flg_pid[d] = fl->pid;
			c->flg_seg[d] = rm(g, fl->seg);
			c->flg_ts[d] = fl->ts;
			c->flg_addr[d] = fl->addr;
			c->flg_value[d] = fl->value;
			c->flg_write[d] = fl->write;
		}
		free(cnt);
	}
	vec_free(&g->running);
	vec_free(&g->runnable);
	vec_free(&g->yields);
	vec_free(&g->flags);
	return 0;
}

/* The tables only the row pass reads: freed once the edges are built, and by
 * argus_graph_free after a failed build (map_free and vec_free are idempotent). */
void free_pass_tables(struct argus_graph *g)
{
	map_free(&g->futex);
	map_free(&g->channel);
	map_free(&g->sends);
	map_free(&g->timers);
	map_free(&g->fdinfo);
	map_free(&g->owners);
	map_free(&g->tfires);
	map_free(&g->fchan);
	map_free(&g->locks);
	map_free(&g->enqueues);
	map_free(&g->unlocks);
	map_free(&g->ipc_sends);
	vec_free(&g->handoffs);
	vec_free(&g->lockv);
	vec_free(&g->sendv);
	vec_free(&g->fdiv);
	vec_free(&g->tfirev);
}

void argus_graph_free(struct argus_graph *g)
{
	if (!g)
		return;
	free_pass_tables(g);
	vec_free(&g->thr);
	vec_free(&g->seg);
	vec_free(&g->wakes);
	vec_free(&g->spawns);
	vec_free(&g->running);
	vec_free(&g->runnable);
	vec_free(&g->yields);
	vec_free(&g->flags);
	vec_free(&g->edges);
	vec_free(&g->msg_edges);
	vec_free(&g->lost);
	map_free(&g->tid_map);
	map_free(&g->ppid);
	vec_free(&g->treqs);
	vec_free(&g->oreqs);
	big_free(g->owner, g->owner_mapped);
	free(g->remap);
	free(g);
}
