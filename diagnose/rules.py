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
Scope: a rule may also carry scope = {"build_id": hex} - the GNU build id of
the executable of the process it was made in (the destination process of a
not_causal edge).  It then applies only where that process's executable has
the same build id, or where the build id cannot be read (names decide).
The executable is the process's lowest file mapping in the trace's MAPPING
records, else /proc/PID/exe when that process still runs under the same
name; its build id is read with pyelftools (NT_GNU_BUILD_ID note).
pair_key is the in-session memory of weak-edge answers: the unordered pair of
threads plus edge type and wait kind (a lock between two threads is one
question, whichever direction it is handed over).

Rules are plain dicts {"kind", "key", "value"[, "scope"][, "id"]} (id: the
session store's row id, the handle of `argus rules rm`).  RuleSet.fired is
the record of every decision a rule made in a diagnosis - one entry per
rule and edge (not_causal) or thread (data_flag) - which the reports list
and metrics.saved_by_rules counts.
"""
import os

from argus.tracer import schema
from argus.diagnose.stacks import symbolizer


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


def elf_build_id(path):
    """The GNU build id (hex) of an ELF file, or None."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile
    try:
        with open(path, "rb") as f:
            for seg in ELFFile(f).iter_segments():
                if seg["p_type"] == "PT_NOTE":
                    for note in seg.iter_notes():
                        if note["n_type"] == "NT_GNU_BUILD_ID":
                            return str(note["n_desc"])
    except (OSError, ELFError, ValueError):  # gone, unreadable, not ELF or a malformed one
        return None
    return None


def executable_path(g, pid):
    """The executable of process pid: its lowest file mapping in the trace
    (executables load below their libraries), else /proc/PID/exe while a
    process of that name still has the pid; None when unknown."""
    path = symbolizer(g).executable(pid)
    if path:
        return path
    try:
        with open(f"/proc/{pid}/comm") as f:
            if f.read().strip() == (g.process_name(pid) or "")[:15]:
                return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        pass
    return None


def build_id(g, pid):
    """Build id of pid's executable in graph g (cached per graph), or None."""
    cache = g.derived.build_ids
    if pid not in cache:
        path = executable_path(g, pid)
        cache[pid] = elf_build_id(path) if path else None
    return cache[pid]


def _scope(g, pid):
    bid = build_id(g, pid)
    return {"build_id": bid} if bid else {}


def not_causal_rule(g, e):
    pid = int(g.threads.pid[int(g.seg.utid[e.dst])])
    return {"kind": "not_causal", "key": edge_key(g, e), "value": None, "scope": _scope(g, pid)}


def data_flag_rule(process, thread, value, scope=None):
    return {"kind": "data_flag", "key": {"process": process, "thread": thread}, "value": value,
            "scope": dict(scope or {})}


def describe(rule):
    """One line: what the rule says."""
    k = rule["key"]
    f = {n: k.get(n, "?") for n in ("edge_type", "src_thread", "src_process", "dst_thread", "dst_process", "wait",
                                    "thread", "process")}   # a stored rule may lack one (cli/session.py)
    if rule["kind"] == "not_causal":
        txt = (f"not causal: {f['edge_type']} {f['src_thread']} ({f['src_process']}) -> {f['dst_thread']} "
               f"({f['dst_process']}) ending a {f['wait']} wait")
    elif rule["kind"] == "data_flag":
        v = rule.get("value") or {}
        flag = f"{v.get('image') or '?'}:{v['symbol']}" if v.get("symbol") else f"0x{int(v.get('addr', 0)):x}"
        txt = f"data flag: {f['thread']} ({f['process']}) polls {flag}"
    else:
        txt = f"{rule['kind']} {k}"
    bid = (rule.get("scope") or {}).get("build_id")
    return txt + (f" [build id {bid[:12]}]" if bid else "")


class RuleSet:
    def __init__(self, rules=(), on_fire=None):
        self.rules = []
        self.fired = []
        self.on_fire = on_fire       # callback(fired entry): the REPL shows it with how to undo
        self._fired_keys = set()
        for r in rules:
            self.add(r)

    def add(self, rule):
        if not any(_same(rule, r) for r in self.rules):
            self.rules.append(rule)

    def _in_scope(self, g, rule, pid):
        want = (rule.get("scope") or {}).get("build_id")
        if not want:
            return True
        have = build_id(g, pid)
        return have is None or have == want

    def _fire(self, rule, subject, effect):
        k = (self.rules.index(rule), subject)
        if k in self._fired_keys:
            return
        self._fired_keys.add(k)
        entry = {"id": rule.get("id"), "kind": rule["kind"], "rule": describe(rule), "effect": effect,
                 "undo": f"argus rules rm {rule['id']}" if rule.get("id") is not None else None}
        self.fired.append(entry)
        if self.on_fire is not None:
            self.on_fire(entry)

    def not_causal(self, g, e):
        if not any(r["kind"] == "not_causal" for r in self.rules):
            return False
        k = edge_key(g, e)
        keys = [k]
        if e.weak:
            # a weak edge is a lock handed over: the pair, either direction
            keys.append(dict(k, src_process=k["dst_process"], src_thread=k["dst_thread"],
                             dst_process=k["src_process"], dst_thread=k["src_thread"]))
        pid = int(g.threads.pid[int(g.seg.utid[e.dst])])
        for r in self.rules:
            if r["kind"] == "not_causal" and r["key"] in keys and self._in_scope(g, r, pid):
                self._fire(r, ("edge", e.eid), f"edge {e.eid} ({e.type}{', weak' if e.weak else ''}) not followed")
                return True
        return False

    def data_flag(self, g, utid):
        pid = int(g.threads.pid[utid])
        key = {"process": g.process_name(pid), "thread": g.comm(utid)}
        for r in self.rules:
            if r["kind"] == "data_flag" and r["key"] == key and self._in_scope(g, r, pid):
                self._fire(r, ("thread", int(utid)), f"names the flag {key['thread']}/{int(g.threads.tid[utid])} "
                                                     f"polls (bp_watch advice)")
                return r["value"]
        return None


def _same(a, b):
    return a["kind"] == b["kind"] and a["key"] == b["key"] and (a.get("scope") or {}) == (b.get("scope") or {})
