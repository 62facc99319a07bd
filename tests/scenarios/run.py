#!/usr/bin/env python3
"""Runs the hang scenarios (real software, real hangs, recorded by Argus) and
prints a score table; docs/scenarios.md describes each scenario.

  python3 tests/scenarios/run.py [--all | --fast] [--only NAME[,NAME]] [--json FILE] [--keep DIR]

Per scenario: install what it needs, start the software, start a private
`argus` daemon, reproduce the hang, stop tracing, then `argus debug --json
--auto` (and `--answers FILE` when that option and a recorded answers file
exist). The report is scored against the scenario's ground truth:

  hung     the spinning vertex is on the hung thread
  type     spinning block type / root cause block type as expected
  root     the expected thread is named as a root cause: "yes" (the primary,
           deepest culprit), "listed" (named, not primary), "no"
  root (ans)  the same with the recorded answers file ("?": the answers did
           not fit this trace's walk and the rest was chosen automatically)
  feature  the graph capability the scenario exercises showed up in the
           report (weak mutex edge on the path, data-flag evidence, batch
           split count); "n/a" when Argus has no way to show it yet

Status: PASS, FAIL, XFAIL (a documented known failure that failed), XPASS
(a known failure that now passes: update the scenario), SKIP (a capability
is missing: the reason says which), ERROR (the scenario could not run).
Exit code 1 when any scenario is FAIL or ERROR.
"""
import argparse
import importlib
import json
import os
import pkgutil
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# tests/ too: `support` (support.programs builds the test programs cases run)
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import harness  # noqa: E402
from harness import Argus, Context, ScenarioError, Skip  # noqa: E402

CASES = "cases"


def load_cases():
    pkg_dir = os.path.join(harness.HERE, CASES)
    mods = []
    for info in sorted(pkgutil.iter_modules([pkg_dir]), key=lambda i: i.name):
        mods.append(importlib.import_module(f"{CASES}.{info.name}"))
    return mods


def _matches(cause, roots):
    for pid, tid in roots:
        if cause["pid"] == pid and (tid is None or cause["tid"] == tid):
            return True
    return False


def check_feature(feature, report, argus, truth):
    """True / False / None (n/a: Argus cannot show it yet)."""
    path = report.get("path", [])
    if feature == "trigger":
        # the slice of a LongRunning hang reaches the process whose request started it
        return any(p["pid"] == truth.extra["trigger_pid"] for p in path)
    if feature == "enqueue":
        # the chain reaches the thread that queued the work, and the graph
        # pairs its enqueue with the hung thread's dispatch (a message edge on
        # the queue's object; the kernel alone sees only the wakeup)
        if not any(p["tid"] == truth.extra["enqueue_tid"] for p in path):
            return False
        proc = subprocess.run([sys.executable, os.path.join(harness.HERE, "graph_probe.py"), "--messages",
                               argus.buffer, str(truth.extra["obj"])], capture_output=True, text=True)
        try:
            pairs = json.loads(proc.stdout)["messages"]
        except (ValueError, KeyError):
            return None
        truth.extra["messages"] = pairs
        return [truth.extra["enqueue_tid"], truth.hung_tid] in pairs
    if feature == "input":
        # the LongRunning slice stopped at the vertex an input event (the key
        # press read through libxcb) opened: "the key press that started it"
        origins = [report["spinning"].get("origin")] + [c.get("origin") for c in report.get("root_causes", [])]
        return any((o or {}).get("kind") == "input" for o in origins)
    if feature == "weak_mutex_edge":
        return any((p.get("edge_in") or {}).get("weak") for p in path)
    if feature == "ownership":
        # the walk reached a lock's holder through an ownership edge (futex owner / channel, file lock)
        return any((p.get("edge_in") or {}).get("type") == "ownership" for p in path)
    if feature == "data_flag":
        return bool(report["spinning"].get("data_flags")) or any(
            (p.get("edge_in") or {}).get("type") == "data_flag" for p in path)
    if feature == "batching_split":
        # The server's loop must be cut per request: segments split by the
        # batch or peer-change criterion in the server process (graph_probe).
        proc = subprocess.run([sys.executable, os.path.join(harness.HERE, "graph_probe.py"), argus.buffer,
                               *map(str, truth.extra["split_pids"])], capture_output=True, text=True)
        try:
            counts = json.loads(proc.stdout)
        except ValueError:
            return None
        if "error" in counts:
            return None
        truth.extra["splits"] = counts
        return any(c.get("batch", 0) + c.get("peer_change", 0) > 0 for c in counts.values())
    return None


def score(sc, truth, report):
    sp = report["spinning"]
    causes = report.get("root_causes", [])
    matching = [c for c in causes if _matches(c, truth.roots)]
    primary = [c for c in matching if c.get("primary")]
    return {
        "hung": sp["pid"] == truth.hung_pid and sp["tid"] == truth.hung_tid,
        "spinning_type": sp["block_type"],
        "spinning_type_ok": sp["block_type"] == sc.spinning_type,
        "root": "yes" if primary else ("listed" if matching else "no"),
        "root_type": matching[0]["block_type"] if matching else None,
        "root_type_ok": any(c["block_type"] == sc.root_type for c in matching),
        "named": [f"{c['comm']}/{c['pid']}:{c['tid']} {c['block_type']}{'*' if c.get('primary') else ''}"
                  for c in causes],
        "queries": report.get("queries"),
        "path_len": len(report.get("path", [])),
    }


def run_one(mod, keep_dir=None, size="1G", detail="full"):
    sc = mod.SCENARIO
    res = {"name": sc.name, "status": "ERROR", "reason": "", "known_failure": sc.known_failure}
    tmp = tempfile.mkdtemp(prefix=f"argus-scn-{sc.name}-")
    ctx = Context(tmp)
    argus = Argus(tmp)
    ctx.argus = argus
    t0 = time.monotonic()
    tracing = False
    try:
        harness.ensure_installed(sc)
        mod.setup(ctx)
        argus.start(size, flags=("--go-probes", "--detail", detail))
        tracing = True
        truth = mod.reproduce(ctx)
        time.sleep(1.5)  # the daemon drains the BPF ring buffer continuously
        if not argus.tracing():
            raise ScenarioError("the tracing daemon ended before the scenario did (ended from outside?): "
                                "the trace does not cover the hang")
        argus.stop()
        tracing = False
        res["events"] = argus.events()
        res["truth"] = {"hung": [truth.hung_pid, truth.hung_tid], "roots": truth.roots, "extra": truth.extra}
        thread = [] if sc.by_pid else ["--tid", truth.hung_tid]
        debug = ["debug", "--buffer", argus.buffer, "--pid", truth.hung_pid, *thread,
                 "--json", "--threshold", sc.threshold_s]
        t1 = time.monotonic()
        proc = argus.run(*debug, "--auto", check=False)
        res["diagnose_s"] = round(time.monotonic() - t1, 2)
        err = (proc.stderr or proc.stdout).strip()
        if proc.returncode != 0 and (proc.returncode < 0 or "Traceback" in err or not err.startswith("argus:")):
            # a crash is not a diagnosis: a broken install or a bug, not a score
            res.update(status="ERROR", reason="argus debug crashed: " + err[-300:])
        elif proc.returncode != 0:
            res.update(status="FAIL", reason="argus debug: " + err[-300:])
            _hangs(argus, truth, res)
        else:
            report = json.loads(proc.stdout)
            res["auto"] = score(sc, truth, report)
            res["report"] = report
            res["answers"] = _answers_run(sc, argus, truth, debug)
            res["features"] = {f: check_feature(f, report, argus, truth) for f in sc.features}
            a = res["auto"]
            ok = (a["hung"] and a["spinning_type_ok"] and a["root"] != "no" and a["root_type_ok"]
                  and all(v is not False for v in res["features"].values()))
            res["status"] = "PASS" if ok else "FAIL"
            if not ok:
                res["reason"] = _why(sc, a, res["features"])
                _hangs(argus, truth, res)
    except Skip as e:
        res.update(status="SKIP", reason=str(e))
    except Exception as e:  # noqa: BLE001 (a broken scenario is one ERROR row, the suite goes on)
        res.update(status="ERROR", reason=f"{type(e).__name__}: {e}")
    finally:
        if tracing:
            argus.stop()
        ctx.close()
        res["wall_s"] = round(time.monotonic() - t0, 1)
        if keep_dir:
            _keep(tmp, os.path.join(keep_dir, sc.name))
        shutil.rmtree(tmp, ignore_errors=True)
    if sc.known_failure and res["status"] in ("FAIL", "PASS"):
        # ERROR and SKIP stay what they are: a known failure is a diagnosis that is wrong
        res["status"] = "XFAIL" if res["status"] == "FAIL" else "XPASS"
    return res


def _keep(tmp, dst):
    """Keeps the trace (sparse: `cp --sparse=always`, never 1 GiB of zeros)
    and the small files of a scenario's scratch directory."""
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    for name in os.listdir(tmp):
        src = os.path.join(tmp, name)
        if name in ("pgdata", "run") or not (os.path.isfile(src) or os.path.isdir(src)):
            continue
        subprocess.run(["cp", "-r", "--sparse=always", src, dst], capture_output=True)


def _answers_run(sc, argus, truth, debug):
    """The diagnosis replayed from a recorded answers file, when both exist."""
    if "--answers" not in argus.help("debug"):
        return {"status": "n/a", "why": "argus debug has no --answers yet"}
    path = os.path.join(harness.ANSWERS, f"{sc.name}.answers")
    if not os.path.exists(path):
        return {"status": "n/a", "why": f"no recorded answers file {os.path.relpath(path)}"}
    proc = argus.run(*debug, "--answers", path, check=False)
    if proc.returncode != 0:
        return {"status": "error", "why": (proc.stderr or proc.stdout).strip()[-300:]}
    report = json.loads(proc.stdout)
    diverged = any("did not fit" in n for n in report.get("notes", []))
    return {"status": "diverged" if diverged else "ok", **score(sc, truth, report)}


def _why(sc, a, features):
    parts = []
    if not a["hung"]:
        parts.append("spinning vertex on the wrong thread")
    if not a["spinning_type_ok"]:
        parts.append(f"spinning {a['spinning_type']} (expected {sc.spinning_type})")
    if a["root"] == "no":
        parts.append(f"root cause not named (named: {'; '.join(a['named']) or 'none'})")
    elif not a["root_type_ok"]:
        parts.append(f"root cause {a['root_type']} (expected {sc.root_type})")
    for f, v in features.items():
        if v is False:
            parts.append(f"{f} not shown")
    return "; ".join(parts)


def _hangs(argus, truth, res):
    proc = argus.run("hangs", "--buffer", argus.buffer, "--pid", truth.hung_pid, "--tid", truth.hung_tid,
                     "--json", check=False)
    res["hangs"] = proc.stdout.strip()[:4000] or proc.stderr.strip()[:400]


def _abbr(block_type):
    return {"LongWait": "LW", "LongRunning": "LR", "RepeatedYield": "RY", "Normal": "N"}.get(block_type, "-")


def _yn(v):
    return "n/a" if v is None else ("yes" if v else "no")


def table(results):
    cols = ["scenario", "status", "hung", "type (spin/root)", "root", "root (ans)", "queries auto/ans", "path auto/ans",
            "diag s", "events", "feature"]
    rows = []
    for r in results:
        a = r.get("auto")
        ans = r.get("answers") or {}
        if a:
            typ = (f"{_abbr(a['spinning_type'])}/{_abbr(a['root_type'])} "
                   f"{'ok' if a['spinning_type_ok'] and a['root_type_ok'] else 'WRONG'}")
            q = f"{a['queries']}/{ans.get('queries', 'n/a')}"
            path = f"{a['path_len']}/{ans.get('path_len', 'n/a')}"
            feat = ", ".join(f"{k}={_yn(v)}" for k, v in (r.get("features") or {}).items()) or "-"
            splits = r.get("truth", {}).get("extra", {}).get("splits")
            if splits:
                feat += " (" + " ".join(f"b{c.get('batch', 0)}/p{c.get('peer_change', 0)}"
                                        for c in splits.values()) + ")"
            ans_root = ans.get("root", "n/a") + ("?" if ans.get("status") == "diverged" else "")
            rows.append([r["name"], r["status"], _yn(a["hung"]), typ, a["root"], ans_root, q, path,
                         str(r.get("diagnose_s", "")), f"{r.get('events') or 0:,}", feat])
        else:
            rows.append([r["name"], r["status"], "-", "-", "-", "-", "-", "-", str(r.get("diagnose_s", "-")),
                         f"{r.get('events') or 0:,}", "-"])
    widths = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c) for i, c in enumerate(cols)]
    line = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    out = [line(cols), line(["-" * w for w in widths])] + [line(r) for r in rows]
    notes = [f"  {r['name']}: {r['status']}: {r.get('known_failure') or r['reason']}"
             for r in results if r["status"] != "PASS"]
    if notes:
        out += ["", "not passing:"] + notes
    counts = {}
    for r in results:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    out += ["", "  ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Score Argus on real hangs in real software.")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--all", action="store_true", help="every scenario (default)")
    g.add_argument("--fast", action="store_true", help="the CI subset")
    ap.add_argument("--only", metavar="NAME", help="comma-separated scenario names")
    ap.add_argument("--json", metavar="FILE", help="write the full results (reports included) here")
    ap.add_argument("--keep", metavar="DIR", help="keep each scenario's trace and logs under DIR")
    ap.add_argument("--list", action="store_true", help="list the scenarios and exit")
    ap.add_argument("--detail", choices=("full", "lean", "auto"), default="full",
                    help="the recording tier the daemon runs at (argus start --detail; default full)")
    args = ap.parse_args(argv)
    if os.geteuid() != 0:
        print("run.py: tracing needs root", file=sys.stderr)
        return 2
    mods = load_cases()
    if args.list:
        for m in mods:
            s = m.SCENARIO
            print(f"{s.name:24} {'fast ' if s.fast else '     '}{s.spinning_type:13} <- {s.root_type:13} {s.summary}")
        return 0
    if args.only:
        names = set(args.only.split(","))
        unknown = names - {m.SCENARIO.name for m in mods}
        if unknown:
            print(f"run.py: unknown scenario {', '.join(sorted(unknown))} (see --list)", file=sys.stderr)
            return 2
        mods = [m for m in mods if m.SCENARIO.name in names]
    elif args.fast:
        mods = [m for m in mods if m.SCENARIO.fast]
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    results = []
    t0 = time.monotonic()
    for m in mods:
        print(f"[{time.monotonic() - t0:6.0f} s] {m.SCENARIO.name} ...", file=sys.stderr, flush=True)
        r = run_one(m, args.keep, detail=args.detail)
        print(f"[{time.monotonic() - t0:6.0f} s] {m.SCENARIO.name}: {r['status']} {r['reason']}",
              file=sys.stderr, flush=True)
        results.append(r)
    print(table(results))
    print(f"total {time.monotonic() - t0:.0f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "total_s": round(time.monotonic() - t0, 1)}, f, indent=1)
    return 1 if any(r["status"] in ("FAIL", "ERROR") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
