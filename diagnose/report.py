"""Rendering a Diagnosis: JSON ("argus.diagnosis/1", docs/diagnosis-json.md)
and plain text.

Algorithm: to_json() turns the Diagnosis into plain Python data (ints, strs,
bools, None, lists, dicts: json.dumps-able, numpy-free).  render_text() works
on that JSON dict only, so it can print a saved report as well, and a `rich`
renderer can be added beside it using the same dict.

Text layout: a header with the hang (thread, process, block type, duration,
what it waited on, evidence, baseline), the chain printed like a stack (one
line per path element: thread, process, start / end relative to the hang
start, block type, the edge that links it to the line above), then the root
causes by depth with the primary one starred, the query count and notes.

Invariant: render_text(d) == render_text(json.loads(render_json(d))).
"""
import json

import numpy as np

from argus.tracer import containers, schema

from argus.diagnose.blocktype import LONG_RUNNING, LONG_WAIT, REPEATED_YIELD, wait_desc
from argus.diagnose.compare import render_compare
from argus.diagnose.dispatch import dispatch_in
from argus.diagnose.profile import render_profile
from argus.diagnose.whatif import render_whatif
from argus.diagnose import hosts
# the formatting helpers live in fmt.py (renderers beside report import them
# without importing report); re-exported for report's callers
from argus.diagnose.fmt import (  # noqa: F401
    fmt_at, fmt_dur, fmt_pct, fmt_rel, fmt_trace_time, fmt_wall, trace_clock,
)

SCHEMA = "argus.diagnosis/1"


# --- Algorithm 1's sentences: algorithm.py decides, these say it ---
def thread_label(g, utid):
    """"comm/tid" of a thread ("comm/host:tid" in a graph of several hosts)."""
    tid = int(g.threads.tid[utid])
    if g.hosts is not None:
        return f"{g.comm(utid)}/{hosts.label(hosts.ident(g, {'pid': tid, 'tid': tid}), 'tid')}"
    return f"{g.comm(utid)}/{tid}"


_START_LABELS = {"trace_start": "already running when the trace started",
                 "thread_start": "the thread's start",
                 "switch_in": "a switch-in without a recorded wakeup",
                 "pre_trace": "a wait that began before the trace",
                 "task": "a task's wakeup"}


def origin_text(g, origin):
    """Where a slice ended (its origin dict), as a clause."""
    if not origin:
        return ""
    v = origin.get("vertex")
    kind = origin["kind"]
    if kind == "culled":
        return f"started by a {origin['label']} wakeup (kernel, culled)"
    if kind == "no_incoming_edge":
        label = origin["label"]
        return f"slice ends at {thread_label(g, int(g.seg.utid[v]))} ({_START_LABELS.get(label, label)})"
    if kind == "input":
        return f"started by an input event read by {thread_label(g, int(g.seg.utid[v]))}"
    if kind == "cycle":
        return f"slice ends in a cycle at {thread_label(g, int(g.seg.utid[v]))}"
    return origin.get("label", kind)


def trigger_text(g, res, t0):
    """For a LongRunning slice (a SliceResult): who triggered the work."""
    if len(res.steps) < 2:
        return origin_text(g, res.origin)
    step = res.steps[1]
    u = int(g.seg.utid[step.vertex])
    txt = f"work triggered by {thread_label(g, u)} ({step.edge.type} at {fmt_rel(step.edge.ts - t0)})"
    last = res.steps[-1].vertex
    if len(res.steps) > 2:
        txt += f"; slice reaches back to {thread_label(g, int(g.seg.utid[last]))}"
    o = res.origin
    if o and o["kind"] == "culled":
        txt += f", {o['label']} wakeup"
    elif o and o["kind"] == "input":
        txt += ", from an input event"
    return txt


def why_text(c, relation="", yield_text=""):
    """A root cause's why, from its classification c (blocktype.Classification;
    a RepeatedYield's is yield_text), with the relation that made it one."""
    ev = c.evidence
    if c.block_type == LONG_WAIT:
        w = ev["longest_wait"]
        txt = f"LongWait on {w['what']} for {fmt_dur(w['dur_ns'])}"
        if w["ongoing"]:
            txt += ", still waiting at trace end"
    elif c.block_type == LONG_RUNNING:
        txt = f"busy on CPU {fmt_pct(ev['cpu_share'])} of the hang"
        if ev["runnable_share"] >= 0.05:
            txt += f", runnable (waiting for a CPU) {fmt_pct(ev['runnable_share'])}"
        if ev.get("work_shared_by", 1) > 1:
            txt += (f"; the work moves between {ev['work_shared_by']} threads of its process (a user-space "
                    f"scheduler), busy {fmt_pct(min(ev['process_busy_share'], 1.0))} of the hang together")
    elif c.block_type == REPEATED_YIELD:
        txt = yield_text
    else:
        txt = c.block_type
    if relation:
        txt += f" ({relation})"
    return txt


def bp_watch_command(pid, image=None, symbol=None, addr=None):
    """The bp_watch command line advised for a polled data flag: by address
    when only that is known, else IMAGE SYMBOL; None when neither is known
    (never a placeholder)."""
    if addr is not None:
        return f"bp_watch {pid} --address 0x{int(addr):x}"
    if image and symbol:
        return f"bp_watch {pid} {image} {symbol}"
    return None


def flags_command(pid, function):
    """`argus flags` recording the polling function while it spins: the
    flag from its instruction streams when no global names it (docs/bp_watch.md)."""
    return f"argus flags --pid {pid} --function {function} --record spinning"


def yield_text(ev, syscalls, cmd, cand, device_paced=False):
    """A RepeatedYield without data flags: what is known of the polling
    (evidence ev, syscall counts), the next step (cmd: a bp_watch command,
    an argus flags one, or None) with what is missing to name the flag
    (cand["missing"]), and the candidates."""
    parts = [f"{ev['yields']} yields", f"{ev['short_waits']} short waits"]
    if ev["timeouts"]:
        parts.append(f"{ev['timeouts']} timeouts")
    period = ev["mean_period_ns"]
    known = ", ".join(parts)
    if period:
        known += f", one every {fmt_dur(period)}"
    if syscalls:
        known += "; syscalls: " + ", ".join(f"{k} x{v}" for k, v in list(syscalls.items())[:5])
    hint = ""
    if cand.get("addresses"):
        hint += "; candidates: addresses polled " + ", ".join(f"0x{x:x}" for x in cand["addresses"])
    if len(cand.get("symbols") or ()) > 1:
        hint += f"; globals {cand['function']} reads: " + ", ".join(cand["symbols"])
    if cand.get("stack"):
        hint += "; loop stack " + " <- ".join(cand["stack"])
    if cand.get("remembered"):
        hint += "; the flag was marked in an earlier session (rule)"
    if device_paced:
        return (f"repeated short waits that the kernel ended, not a task: paced by a device or a kernel "
                f"thread ({known}){hint}")
    if cmd and cmd.startswith("bp_watch"):
        return f"repeated yield: polling a data flag; watch it with {cmd} ({known}){hint}"
    missing = cand.get("missing") or "nothing names it"
    step = f"; find it with {cmd}, then watch it with bp_watch" if cmd else ""
    return f"repeated yield: polling a data flag the trace does not name ({missing}){step} ({known}){hint}"


def relation_text(g, edge_type, role, other_utid, rel_ns):
    """How a root cause relates to the thread before it on the path: it woke
    it, sent it a message or wrote the flag it read (role: the path's)."""
    where = "on the baseline path" if role == "baseline" else "on the wake-up path"
    who = thread_label(g, other_utid)
    if edge_type == "message":
        return f"{where} it sent a message {who} read at {fmt_rel(rel_ns)}"
    if edge_type in ("wakeup", "spawn"):
        return f"{where} it woke {who} at {fmt_rel(rel_ns)}"
    return f"{where} it wrote the data flag {who} read at {fmt_rel(rel_ns)}"


def owner_relation_text(g, o, victim, edge_rel_ns, t0):
    """The relation of a holder (ownership.Owner o) to the victim thread it
    was reached from (its ownership edge at edge_rel_ns after the hang start)."""
    if o.kind == "channel_peer":
        return (f"holds the other end of what {thread_label(g, victim)} waits on (inferred: the "
                f"channel's peer, or a process that inherited it), at {fmt_rel(o.ts - t0)}")
    if o.kind == "process_peer":
        what = f"futex 0x{o.obj:x}" if o.obj else "the signal"
        return (f"may hold {what}, which {thread_label(g, victim)} waits for (inferred: a thread of its "
                f"process held up over the hang; nothing names the holder), at {fmt_rel(o.ts - t0)}")
    if o.kind == "goroutine_peer":
        what = f"channel 0x{o.obj:x}" if o.obj else "what its goroutine waits for"
        return (f"may end the wait of the goroutine locked to {thread_label(g, victim)} ({what}; inferred: a "
                f"thread of its process held up over the hang, the goroutine parked before the Go probes "
                f"and nothing names who ends it), at {fmt_rel(o.ts - t0)}")
    if o.kind == "goroutine_timer":
        return (f"stands for goroutine {o.obj}, locked to no thread and asleep on a timer since before the Go "
                f"probes, not run since; it may end the wait of {thread_label(g, victim)} (inferred: of its "
                f"process's parked goroutines only those asleep on a timer wake by themselves; an idle M "
                f"will run it), at {fmt_rel(o.ts - t0)}")
    if o.kind == "goroutine_fd":
        return (f"may end the wait of {thread_label(g, victim)} on fd {o.obj} (inferred: in a Go program any "
                f"thread may run the goroutine that uses the other end; a thread of its process held up over "
                f"the hang), at {fmt_rel(o.ts - t0)}")
    if o.kind == "goroutine_lock":
        return (f"may hold the file lock on inode {o.obj} that {thread_label(g, victim)} waits for (inferred: "
                f"the kernel names their process as its holder, and in a Go program a goroutine holds it, "
                f"not the thread that took it; a thread of the process held up over the hang), "
                f"at {fmt_rel(o.ts - t0)}")
    if o.kind == "child":
        return f"is a child process {thread_label(g, victim)} waits for (inferred), at {fmt_rel(o.ts - t0)}"
    if o.edge < 0:
        return (f"holds what {thread_label(g, victim)} polls: it released futex 0x{o.obj:x}, which "
                f"{thread_label(g, victim)} waited on, at {fmt_rel(o.ts - t0)} (inferred)")
    what = {"futex_owner": f"the futex 0x{o.obj:x} names it as owner",
            "futex_channel": f"it woke waiters of futex 0x{o.obj:x} before (inferred)",
            "file_lock": f"it holds a file lock on inode {o.obj} that was tried",
            "thread_exit": f"it is the thread {thread_label(g, victim)} joins (waits for it to exit: "
                           f"futex 0x{o.obj:x} is its clear_child_tid)"}.get(o.kind, o.kind)
    return (f"holds what {thread_label(g, victim)} waits for: {what}; {o.tries_text} at it, "
            f"last at {fmt_rel(edge_rel_ns)}{'' if o.weak else ', strong'}")


def flags_polled_text(addrs):
    return f"repeated yield polling data flag(s) {', '.join(f'0x{x:x}' for x in addrs)}"


def unexplained_text(g, block_type, owner=None, explained=False, kernel_wakers=()):
    """The clause a spinning thread's own root cause ends with: the holder
    that ran normally, that no path explains the wait (and which kernel
    wakeups end such waits: [(label, count)]), or that the path ran normally."""
    if owner is not None:
        return (f"; {thread_label(g, owner.utid)} holds what it waits for ({owner.kind}) "
                "but ran normally during the hang")
    if explained:
        return "; every thread on the wake-up path ran normally during the hang"
    if block_type != LONG_WAIT:
        return "; no write by another thread was observed"
    txt = "; no baseline (no similar wait ended quickly by a task's wakeup) and the wait " \
          "did not end with a task's wakeup in the trace"
    if kernel_wakers:
        kernel = ", ".join(k if n == 1 else f"{k} x{n}" for k, n in kernel_wakers)
        txt += f"; such waits end by kernel wakeups ({kernel}): the thread waits on the " \
               f"kernel or a device, not on another task"
    return txt


def lost_records_note(lost):
    return f"{lost} records were lost while tracing; edges may be missing"


def unreported_switches_note(n):
    # Not a loss of the tracer: the kernel ran no tracepoint (docs/linux-tracer.md, "Lost records").
    return (f"{n} context switches were never reported by the kernel (no tracepoint ran), so the "
            "records of those stretches are missing; edges may be missing")


# --- JSON ---
def _ident(g, utid):
    pid = int(g.threads.pid[utid])
    out = {"pid": pid, "tid": int(g.threads.tid[utid]), "comm": g.comm(utid), "process": g.process_name(pid),
           **g.process_scope(pid)}
    return out if g.hosts is None else hosts.ident(g, out)


def _clean(x):
    """numpy scalars -> Python; dict keys -> str."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x


def _origin(g, o):
    if not o:
        return None
    out = {"kind": o["kind"], "label": o.get("label")}
    v = o.get("vertex")
    if v is not None and v >= 0:
        out["vertex"] = int(v)
        out.update({k: val for k, val in _ident(g, int(g.seg.utid[v])).items() if k in ("pid", "tid", "comm", "host")})
        out["start_ns"] = int(g.seg.start[v])
    return out


def _edge_in(edge, g=None):
    if edge is None:
        return None
    out = {"type": edge["type"], "weak": bool(edge["weak"])}
    if "owner_kind" in edge:
        out["owner_kind"] = edge["owner_kind"]
    eid = edge.get("eid")
    if g is not None and eid is not None and eid >= 0:
        row = int(g.edges.row[eid])      # a goroutine's hand-over: the GO_READY that made the edge
        if 0 <= row < len(g.rows) and int(g.rows["type"][row]) == schema.GO_READY:
            out["goroutine"] = f"{int(g.edges.obj[eid]):#x}"
    return out


def to_json(d):
    g = d.graph
    h = d.hang
    c = h.classification
    spinning = _ident(g, h.utid)
    spinning.update({
        "start_ns": int(h.start_ns), "end_ns": int(h.end_ns), "dur_ns": int(h.dur_ns),
        "block_type": c.block_type, "kind": h.kind, "ongoing": bool(h.ongoing), "vertex": int(h.vertex),
        "threshold_ns": int(d.threshold_ns),
    })
    spinning.update(c.evidence)
    extra = d.spinning_extra or {}
    spinning["baseline"] = hosts.localized(g, extra.get("baseline"))
    spinning["origin"] = _origin(g, extra.get("origin"))
    spinning["owner"] = hosts.localized(g, extra.get("owner"))
    dispatch = dispatch_in(g, h.utid, int(h.start_ns), int(h.end_ns))
    if dispatch is not None:          # the callback the hang sits in (probes, `argus run`)
        spinning["dispatch"] = dispatch
    flags = extra.get("flags")
    spinning["data_flags"] = [{"addr": int(a), "reads": int(n)} for a, n in sorted(flags.items())] if flags else []
    path = []
    for e in d.path:
        item = _ident(g, e.utid)
        item.update({
            "start_ns": int(e.start_ns), "end_ns": int(e.end_ns), "block_type": e.block_type,
            "edge_in": _edge_in(e.edge, g),
            "vertex": int(e.vertex), "role": e.role, "depth": int(e.depth),
            "via_baseline": bool(e.via_baseline),
            "block_window": [int(x) for x in e.block_window] if e.block_window else None,
        })
        path.append(item)
    causes = []
    for r in d.root_causes:
        item = _ident(g, r.utid)
        item.update({
            "block_type": r.block_type, "start_ns": int(r.start_ns), "end_ns": int(r.end_ns),
            "why": r.why, "depth": int(r.depth), "primary": bool(r.primary), "vertex": int(r.vertex),
            "origin": _origin(g, r.origin), "advice": r.advice, "evidence": r.evidence,
            "profile": r.profile, "whatif": r.whatif,
        })
        causes.append(item)
    return _clean(hosts.annotate(g, {
        "schema": SCHEMA,
        "spinning": spinning,
        "path": path,
        "root_causes": causes,
        "queries": int(d.queries),
        "metrics": dict(d.metrics),
        "rules_fired": list(d.rules_fired),
        "compare": d.compare,
        "notes": list(d.notes),
        "trace": trace_json(g),
    }))


def trace_json(g):
    """The reports' "trace" object: the time range of the graph, its clock
    (origin, wall-clock offset) and what the decode dropped (torn or damaged
    chunks, corrupt records)."""
    origin, wall = trace_clock(g)
    return {"start_ns": g.trace_start, "end_ns": g.trace_end, "origin_ns": origin, "wall_offset_ns": wall,
            "torn_chunks": int(g.torn_chunks), "bad_records": int(g.bad_records)}


def render_json(d, indent=2):
    data = d if isinstance(d, dict) else to_json(d)
    return json.dumps(data, indent=indent, sort_keys=False)


# --- text ---
def _who(x):
    return f"{x['comm'] or '?'}/{hosts.label(x, 'tid')}"


def _proc(x):
    where = containers.describe(x, netns=False)      # the container, or a cgroup but the root
    return f"{x.get('process') or '?'}/{hosts.label(x)}" + (f" [{where}]" if where else "")


def evidence_text(ev):
    """One line of classification evidence (a spinning dict or a root
    cause's evidence): on-CPU share, yields / short sleeps / timeouts with
    their period, the longest wait and what it waited on."""
    parts = [f"on CPU {fmt_pct(ev.get('cpu_share', 0))}", f"runnable {fmt_pct(ev.get('runnable_share', 0))}"]
    lw = ev.get("longest_wait")
    if lw:
        w = f"longest wait {fmt_dur(lw.get('in_window_ns', lw['dur_ns']))} on {lw['what']}"
        if lw.get("ongoing"):
            w += " (still waiting at trace end)"
        if lw.get("timed_out"):
            w += " (timed out)"
        parts.append(w)
    if ev.get("yields") or ev.get("short_waits"):
        rep = f"{ev.get('yields', 0)} yields, {ev.get('short_waits', 0)} short waits"
        if ev.get("timeouts"):
            rep += f" ({ev['timeouts']} timed out)"
        if ev.get("mean_period_ns"):
            rep += f", one every {fmt_dur(ev['mean_period_ns'])}"
        parts.append(rep)
    return ", ".join(parts)


def render_text(d):
    j = d if isinstance(d, dict) else to_json(d)
    s = j["spinning"]
    t0 = s["start_ns"]
    out = []
    state = "still ongoing at trace end" if s["ongoing"] else f"ended at {fmt_rel(s['end_ns'] - t0)}"
    out.append(f"Hang in {_who(s)} (process {_proc(s)}): {s['block_type']} for {fmt_dur(s['dur_ns'])}, {state}")
    tr = j.get("trace") or {}
    out.append(f"  hang start = {fmt_at(s['start_ns'], tr.get('origin_ns', tr.get('start_ns', 0)), tr.get('wall_offset_ns'))}"
               " into the trace; times below are relative to it")
    jb = s.get("joined_by")
    if jb:
        out.append(f"  {_who(jb)} (the main thread) waits to join this thread for "
                   f"{fmt_dur(jb['end_ns'] - jb['start_ns'])} (pthread_join: the JVM launcher runs main() on a "
                   "new thread); the hang is this thread's (--tid to choose another)")
    if s.get("named_longest_wait"):
        out.append("  named by you (--pid / --tid): Argus found no hang of this thread on its own "
                   f"(it would call this {(s.get('wait_model') or {}).get('kind', 'span')} wait not a hang); "
                   "its longest wait is diagnosed as asked")
    elif s.get("user_named"):
        out.append("  named by you (--tid and --at): Argus found no hang there on its own "
                   f"(it would call this {(s.get('wait_model') or {}).get('kind', 'span')} not a hang); diagnosed as asked")
    out.append("  evidence: " + evidence_text(s))
    b = s.get("baseline")
    if b:
        rel = []
        rel.append("same thread" if b["same_thread"] else f"thread {b['comm']}/{hosts.label(b, 'tid')}")
        if b["same_obj"]:
            rel.append("same object")
        out.append(f"  baseline: a {fmt_dur(b['wait_ns'])} wait at {fmt_rel(b['start_ns'] - t0)} "
                   f"({', '.join(rel)})")
    own = s.get("owner")
    if own:
        out.append(f"  held by: {own['comm']}/{hosts.label(own, 'tid')} ({own['kind']}{', weak' if own['weak'] else ''}, "
                   f"{own['tries']} {'try' if own['tries'] == 1 else 'tries'} point at it)")
    dp = s.get("dispatch")
    if dp:
        state = "still running at trace end" if dp["ongoing"] else f"returned at {fmt_rel(dp['end_ns'] - t0)}"
        out.append(f"  in a dispatch: callback began at {fmt_rel(dp['start_ns'] - t0)}, {state} "
                   f"({fmt_dur(dp['dur_ns'])}, {round(100 * dp['window_share'])}% of the hang; object 0x{dp['obj']:x})")
    if s.get("data_flags"):
        out.append("  data flags read: " + ", ".join(f"0x{f['addr']:x} x{f['reads']}" for f in s["data_flags"]))
    out.append("")
    out.append("Chain (spinning thread first, walking back along causality):")
    rows = [("#", "thread", "process", "start", "end", "block type", "edge in", "role")]
    for i, p in enumerate(j["path"]):
        e = p["edge_in"]
        edge = "-" if e is None else e["type"] + (f" {e['owner_kind']}" if e.get("owner_kind") else "") + \
            (f" goroutine {e['goroutine']}" if e.get("goroutine") else "") + (" (weak)" if e["weak"] else "")
        rows.append((str(i), _who(p), _proc(p), fmt_rel(p["start_ns"] - t0), fmt_rel(p["end_ns"] - t0),
                     p["block_type"], edge, p["role"] + (f" d{p['depth']}" if p["depth"] else "")))
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    for r in rows:
        out.append("  " + "  ".join(col.ljust(widths[k]) if k else col.rjust(widths[k])
                                    for k, col in enumerate(r)).rstrip())
    origin = s.get("origin")
    if origin:
        o = f"  slice origin: {origin['kind']}"
        if origin.get("label") and origin["label"] != origin["kind"]:
            o += f" ({origin['label']})"
        if origin.get("tid") is not None:
            o += f" at {origin['comm']}/{hosts.label(origin, 'tid')}"
        out.append(o)
    out.append("")
    out.append("Root causes (by depth; * = primary: the deepest, the culprit of the culprit):")
    if not j["root_causes"]:
        out.append("  none found")
    for r in j["root_causes"]:
        mark = "*" if r["primary"] else " "
        out.append(f"  {mark} depth {r['depth']}  {_who(r)} (process {_proc(r)})  {r['block_type']}  "
                   f"{fmt_rel(r['start_ns'] - t0)} .. {fmt_rel(r['end_ns'] - t0)}")
        out.append(f"      {r['why']}")
        if r.get("advice"):
            out.append(f"      next step: {r['advice']}")
        out += _explain_lines(r)
    cmp = j.get("compare")
    if cmp and cmp.get("differences"):
        out.append("")
        out += render_compare(cmp, top=3)
    out.append("")
    m = j.get("metrics") or {}
    line = f"Queries: {j['queries']}"
    if m:
        if m["mode"] == "auto":
            line += f"; path length {m['path_len']} (automatic answers, as --auto)"
        else:
            line += f"; path length {m['path_len']} ({m['mode']}), {m['auto_path_len']} with --auto"
        if m.get("saved_by_rules"):
            line += f"; {m['saved_by_rules']} decision(s) made by rules of earlier sessions"
        if m.get("saved_by_memory"):
            line += f"; {m['saved_by_memory']} question(s) saved by answers earlier in this one"
    out.append(line)
    fired = j.get("rules_fired") or []
    if fired:
        out.append(f"Rules applied ({len(fired)}; --no-rules ignores them):")
    for r in fired:
        out.append(f"  rule {r['id'] if r.get('id') is not None else '(new)'}: {r['rule']}: {r['effect']}"
                   + (f" (undo: {r['undo']})" if r.get("undo") else ""))
    out += hosts.text_lines(j)
    for n in j.get("notes", ()):
        out.append(f"Note: {n}")
    return "\n".join(out) + "\n"


def _explain_lines(r):
    """The what-if slack and the profile summary of a root cause (diagnose/whatif.py, profile.py)."""
    out = []
    w = render_whatif(r.get("whatif"))
    if w:
        out.append(f"      {w}")
    if r.get("profile"):
        out += render_profile(r["profile"], tree_depth=0, bottom_up=4)
    return out


def hangs_to_json(g, hangs, ranks=None):
    """`argus hangs --json`: {"schema": "argus.hangs/1", "hangs": [Hang.to_dict ...]}; ranks: {id(hang):
    candidates.Candidate} adds "candidate": {"tier", "why"} (the ranking `argus debug` picks by)."""
    def item(h):
        d = h.to_dict(g)
        if g.hosts is not None and "pid" in d and "tid" in d:
            d = hosts.ident(g, d)
        c = (ranks or {}).get(id(h))
        if c is not None:
            d["candidate"] = {"tier": c.tier, "why": c.why}
        return d
    out = {"schema": "argus.hangs/1", "hangs": [item(h) for h in hangs], "trace": trace_json(g)}
    if g.hosts is not None:
        out["hosts"] = hosts.hosts_json(g)
    return _clean(out)


def render_hangs_text(g, hangs, with_process=False, ranks=None):
    """`argus hangs`: one line per hang candidate (with_process: a process
    column, for the list of every process's hangs; ranks as in hangs_to_json:
    a "why" column, the thread's class in the ranking)."""
    if not hangs:
        return "no hangs\n"
    where = any(g.process_where(h.pid) for h in hangs)      # a column only when a trace knows containers
    rows = [(("process",) if with_process else ()) + (("where",) if where else ())
            + ("thread", "kind", "block type", "start", "duration", "what")
            + (("why listed",) if ranks else ())]
    for h in hangs:
        what = wait_desc(g, h.vertex) if h.kind == "wait" else \
            f"cpu {fmt_pct(h.classification.evidence['cpu_share'])}, {h.classification.evidence['yields']} yields"
        dur = fmt_dur(h.dur_ns) + (" (ongoing)" if h.ongoing else "")
        rows.append(((f"{g.process_name(h.pid)}/{hosts.graph_label(g, h.pid)}",) if with_process else ()) +
                    ((g.process_where(h.pid) or "-",) if where else ()) +
                    (f"{g.comm(h.utid)}/{hosts.graph_label(g, h.tid)}" + (" main" if h.tid == h.pid else ""),
                     h.kind, h.block_type,
                     fmt_trace_time(g, h.start_ns), dur, what) +
                    ((ranks[id(h)].why if id(h) in ranks else "-",) if ranks else ()))
    widths = [max(len(r[k]) for r in rows) for k in range(len(rows[0]))]
    return "".join("  ".join(c.ljust(widths[k]) for k, c in enumerate(r)).rstrip() + "\n" for r in rows)
