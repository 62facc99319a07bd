"""Rules: a user's decisions, keyed so they apply to other traces.

A rule never names a pid, tid, vertex or address that changes from run to
run.  Keys use what stays: process name, thread name (comm), edge type and
the kind of wait the edge ended (wait reason name: futex, read, ...).
  not_causal  key = {src_process, src_thread, dst_process, dst_thread,
                     edge_type, wait}: an edge like that is not causality
                     (e.g. a mutex handed over); InteractiveSlice drops it.
                     For a weak edge (a lock between two threads) the rule
                     holds for the pair in both directions.
  data_flag   key = {process, thread}; value = {image, symbol} or {addr}:
                     the flag the thread polls in a RepeatedYield loop, so the
                     bp_watch advice is complete without asking again.
pair_key is the in-session memory of weak-edge answers: the unordered pair of
threads plus edge type and wait kind (a lock between two threads is one
question, whichever direction it is handed over).

Rules are plain dicts {"kind", "key", "value"} so the session store can keep
them as JSON.
"""
from argus.tracer import schema


def _names(g, v):
    u = int(g.seg.utid[v])
    pid = int(g.threads.pid[u])
    return g.process_name(pid) or "?", g.comm(u) or "?"


def _wait_kind(g, dst):
    prev = g.prev_segment(dst)
    if prev < 0 or not g.seg.wait_known[prev]:
        return "unknown"
    return schema.WAIT_NAMES.get(int(g.seg.wait_reason[prev]), "?")


def edge_key(g, e):
    sp, st = _names(g, e.src)
    dp, dt = _names(g, e.dst)
    return {"src_process": sp, "src_thread": st, "dst_process": dp, "dst_thread": dt,
            "edge_type": e.type, "wait": _wait_kind(g, e.dst)}


def pair_key(g, e):
    a, b = _names(g, e.src), _names(g, e.dst)
    return (tuple(sorted((a, b))), e.type, _wait_kind(g, e.dst))


def not_causal_rule(g, e):
    return {"kind": "not_causal", "key": edge_key(g, e), "value": None}


def data_flag_rule(process, thread, value):
    return {"kind": "data_flag", "key": {"process": process, "thread": thread}, "value": value}


class RuleSet:
    def __init__(self, rules=()):
        self.rules = []
        self.hits = 0
        for r in rules:
            self.add(r)

    def add(self, rule):
        if rule not in self.rules:
            self.rules.append(rule)

    def not_causal(self, g, e):
        if not any(r["kind"] == "not_causal" for r in self.rules):
            return False
        k = edge_key(g, e)
        keys = [k]
        if e.weak:
            # a weak edge is a lock handed over: the pair, either direction
            keys.append(dict(k, src_process=k["dst_process"], src_thread=k["dst_thread"],
                             dst_process=k["src_process"], dst_thread=k["src_thread"]))
        hit = any(r["kind"] == "not_causal" and r["key"] in keys for r in self.rules)
        self.hits += hit
        return hit

    def data_flag(self, process, thread):
        for r in self.rules:
            if r["kind"] == "data_flag" and r["key"] == {"process": process, "thread": thread}:
                self.hits += 1
                return r["value"]
        return None
