"""Scores one corpus case's `argus debug --json --auto` report against its
ground truth, and renders the tables by mechanism, depth and language
(Markdown, so docs/scenarios.md can include them).  run.py's docstring says
what each column means."""
from collections import OrderedDict


def _is_root(cause, truth, root_role):
    pid, tid = truth["roles"][root_role]
    if cause["pid"] != pid:
        return False
    if tid:
        return cause["tid"] == tid
    # tid 0: a Go goroutine not locked to an OS thread: any thread of its
    # process but R0, the threads other roles are locked to and the noise
    # load's (a goroutine locked to its own thread, computing: naming it is
    # naming a bystander)
    others = {t for p, t in truth["roles"] if p == pid and t}
    return cause["tid"] not in others and not (truth.get("load") and cause["tid"] == truth["load"])


def _role_of(cause, truth):
    """The role a named thread plays ("R2"), or its comm when it plays none."""
    for r, (pid, tid) in enumerate(truth["roles"]):
        if cause["pid"] == pid and cause["tid"] == tid:
            return f"R{r}"
    if truth.get("load") and (cause["pid"] == truth["load"] or cause["tid"] == truth["load"]):
        return "load"
    last = len(truth["roles"]) - 1
    if _is_root(cause, truth, last):
        return f"R{last}"             # an unpinned Go root: any thread of its process but R0
    for r, (pid, tid) in enumerate(truth["roles"]):
        if cause["pid"] == pid and not tid and r:
            return "a thread of an unpinned goroutine's process"
    for r, (pid, tid) in enumerate(truth["roles"]):
        if cause["pid"] == pid:
            return f"R{r}'s process, thread {cause['tid']}"
    other = (truth.get("batch") or {}).get(str(cause["pid"]))
    if other:
        return f"other case {other}"
    if cause["pid"] == truth.get("runner"):
        return "runner"
    return f"{cause.get('comm')}/{cause['pid']}:{cause['tid']}"


def _overlaps(h, sp):
    return h["tid"] == sp["tid"] and h["start_ns"] < sp["end_ns"] and sp["start_ns"] < h["end_ns"]


def score_case(case, truth, report, hangs, error=""):
    d = case.depth
    hung_pid, hung_tid = truth["roles"][0]
    if report is None:
        agree = not [h for h in hangs if h["tid"] == hung_tid]
        return {"status": "FAIL", "reason": f"argus debug: {error[-200:]}", "hung": False, "hung_type": None,
                "root": "no", "root_type": None, "agree": agree, "named": [], "primary_role": "none"}
    sp = report["spinning"]
    causes = report.get("root_causes", [])
    matching = [c for c in causes if _is_root(c, truth, d)]
    primary = [c for c in causes if c.get("primary")]
    root = "yes" if any(c.get("primary") for c in matching) else ("listed" if matching else "no")
    hung = sp["pid"] == hung_pid and sp["tid"] == hung_tid
    hung_type_ok = sp["block_type"] == case.hung_type
    root_type_ok = any(c["block_type"] == case.root_type for c in matching)
    agree = any(_overlaps(h, sp) for h in hangs)
    named = [f"{_role_of(c, truth)} {c['block_type']}{'*' if c.get('primary') else ''}" for c in causes]
    ok = hung and hung_type_ok and root == "yes" and root_type_ok
    why = []
    if not hung:
        why.append(f"spinning on {_role_of(sp, truth)}")
    if not hung_type_ok:
        why.append(f"hung {sp['block_type']} (expected {case.hung_type})")
    if root != "yes":
        why.append(f"root R{d} {root} (named: {'; '.join(named) or 'none'})")
    if matching and not root_type_ok:
        why.append(f"root {matching[0]['block_type']} (expected {case.root_type})")
    return {"status": "PASS" if ok else "FAIL", "reason": "; ".join(why), "hung": hung,
            "hung_type": sp["block_type"], "root": root,
            "root_type": matching[0]["block_type"] if matching else None, "root_type_ok": root_type_ok,
            "hung_type_ok": hung_type_ok, "agree": agree, "named": named,
            "primary_role": _role_of(primary[0], truth) if primary else "none"}


def _pct(n, total):
    return f"{n}/{total} ({100 * n / total:.0f}%)" if total else "-"


def _row(label, rs, stable):
    scored = [r for r in rs if r["status"] in ("PASS", "FAIL")]
    n = len(scored)
    types = sum(1 for r in scored if r.get("hung_type_ok") and r.get("root_type_ok"))
    return [label, str(len(rs)), _pct(sum(r["status"] == "PASS" for r in scored), n),
            _pct(sum(r.get("root") == "yes" for r in scored), n),
            str(sum(r.get("root") == "listed" for r in scored)),
            _pct(types, n), _pct(sum(bool(r.get("hung")) for r in scored), n),
            _pct(sum(bool(r.get("agree")) for r in scored), n),
            str(sum(r["status"] == "ERROR" for r in rs)), stable]


def _table(title, groups, stability):
    cols = ["", "runs", "pass", "root found", "listed", "block types", "hung thread", "agree", "error", "stable"]
    rows = []
    for label, rs in groups.items():
        ids = {r["id"] for r in rs}
        st = [stability[i] for i in ids if i in stability]
        rows.append(_row(label, rs, f"{sum(st)}/{len(st)}" if st else "-"))
    out = [f"### By {title}", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def _stable_key(label):
    """A primary root cause as comparable across runs: its role, or what it
    is without the run's pids and tids ("R0's process, thread 9429" and
    "python3/77:78" name the same thing in every run as "R0's process" and
    "python3")."""
    return label.split(", thread")[0].split("/")[0]


def stability(results):
    """{case id: the same primary role in every scored run} (only with 2+ runs)."""
    by = {}
    for r in results:
        if r["status"] in ("PASS", "FAIL"):
            by.setdefault(r["id"], []).append(_stable_key(r.get("primary_role") or "none"))
    return {i: len(set(v)) == 1 for i, v in by.items() if len(v) > 1}


def markdown(results, runs=1):
    stab = stability(results) if runs > 1 else {}
    by_mech, by_depth, by_lang = OrderedDict(), OrderedDict(), OrderedDict()
    import gen
    for m in gen.MECHANISMS:
        by_mech[m] = [r for r in results if m in set(r["case"]["links"]) | {r["case"]["root"]}]
    for d in range(1, 6):
        by_depth[str(d)] = [r for r in results if r["case"]["depth"] == d]
    for lang in gen.ALL:
        by_lang[lang] = [r for r in results if r["case"]["lang"] == lang]
    total = OrderedDict(all=results)
    out = [_table("mechanism (a case counts under each of its links and its root)",
                  OrderedDict((k, v) for k, v in by_mech.items() if v), stab),
           _table("depth", OrderedDict((k, v) for k, v in by_depth.items() if v), stab),
           _table("language", OrderedDict((k, v) for k, v in by_lang.items() if v), stab),
           _table("total", total, stab)]
    unstable = sorted(i for i, same in stab.items() if not same)
    if unstable:
        out.append("### Unstable (a different primary root cause across runs)\n")
        for i in unstable:
            roles = [r.get("primary_role") for r in results if r["id"] == i and r["status"] in ("PASS", "FAIL")]
            out.append(f"- `{i}`: " + ", ".join(map(str, roles)))
        out.append("")
    bad = [r for r in results if r["status"] != "PASS"]
    if bad:
        out.append("### Not passing\n")
        out += [f"- `{r['id']}` (run {r.get('run', 1)}): {r['status']}: {r.get('reason', '')}" for r in bad]
    return "\n".join(out) + "\n"
