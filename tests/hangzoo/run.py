#!/usr/bin/env python3
"""Runs the generated hang corpus (gen.py) under Argus and scores the diagnosis.

  python3 tests/hangzoo/run.py [--fast] [--runs N] [--seed S] [--only MECH[,MECH]]
                               [--lang LANG[,LANG]] [--cases ID[,ID]] [--detail full|lean|auto] [--jobs J] [--keep DIR] [--json FILE] [--markdown FILE] [--list]

Cases run in batches of --jobs programs at once under one private daemon
(tests/scenarios/harness.py's Argus and Context): each program prints its
roles' pids / tids before its hang starts; a hang that ends does so before
tracing stops, an ongoing one is still going on (its root is still busy)
when tracing stops ~4.5 s after the hang began.  Then, per case,
`argus debug --pid P --json --auto` and `argus hangs --pid P --json`.

Score per case (all under --auto, the hung pid given, no --tid):
  hung       the spinning vertex is on R0, the main thread
  hung type  its block type is the expected one (LongWait; RepeatedYield when R0 polls)
  root       "yes": the primary root cause (the deepest culprit) is the
             root role's thread; "listed": it is among the root causes, not
             primary; "no".  A Go role not locked to an OS thread has no
             fixed tid: any thread of its process but R0 counts.
             Found = "yes" only: a listed root among bystanders is not an answer.
  root type  the root role's entry has the expected block type
  agree      `argus hangs --pid P` lists a hang on the same thread whose
             window overlaps the one `debug` diagnosed (or neither finds one)
  PASS       hung, hung type, root "yes" and root type all right.
With --runs N each case runs N times; "stable" means the same root role
(or the same wrong thread's role / comm) was primary in every run.
Exit code 0 when the machinery ran (a wrong diagnosis is a score, not an
error); 1 when a case could not run (ERROR); 2 on bad arguments.
"""
import argparse
import concurrent.futures
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scenarios"))

import programs  # noqa: E402
import gen  # noqa: E402
import score  # noqa: E402
from harness import Argus, Context, ScenarioError  # noqa: E402

ONGOING_TRACE_S = 4.5     # an ongoing hang is recorded this long, then tracing stops
TRUTH_TIMEOUT_S = 30.0
THRESHOLD_S = 2.0


def _read_truth(proc, timeout):
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        raise ScenarioError(f"no ground-truth line in {timeout:.0f} s")
    line = proc.stdout.readline()
    if not line:
        raise ScenarioError(f"exited ({proc.poll()}) before printing its roles")
    return json.loads(line)


def run_batch(batch, keep=None, run_no=1, start_flags=("--go-probes",)):
    """Runs `batch` (cases) at once under one private daemon (`argus start`
    with start_flags); one result per case."""
    tmp = tempfile.mkdtemp(prefix="argus-hangzoo-")
    ctx, argus = Context(tmp), Argus(tmp)
    results = {c.id: {"id": c.id, "run": run_no, "status": "ERROR", "reason": "", "case": c.to_dict()}
               for c in batch}
    live = []
    tracing = False
    try:
        argus.start("1G", flags=start_flags)
        tracing = True
        for c in batch:
            scratch = ctx.path(c.id, "scratch", "x")
            scratch = os.path.dirname(scratch)
            try:
                proc = ctx.spawn(programs.command(c, scratch), stdout=subprocess.PIPE, text=True,
                                 stderr=open(ctx.path(c.id, "stderr"), "w"))
                live.append((c, proc, _read_truth(proc, TRUTH_TIMEOUT_S), time.monotonic()))
            except (ScenarioError, ValueError, programs.BuildError) as e:
                results[c.id]["reason"] = f"{type(e).__name__}: {e}"
        for c, proc, truth, t0 in live:
            if c.ongoing:
                time.sleep(max(0.0, t0 + ONGOING_TRACE_S - time.monotonic()))
            else:
                try:
                    rc = proc.wait(timeout=c.hold_s + 30)
                except subprocess.TimeoutExpired:
                    rc = "timeout"
                if rc != 0:
                    results[c.id]["reason"] = f"program exited with {rc} (the chain did not unwind)"
                    truth["broken"] = True
        time.sleep(1.5)  # the daemon drains the BPF ring buffer continuously
        if not argus.tracing():
            raise ScenarioError("the tracing daemon ended before the batch did")
        argus.stop()
        tracing = False
        ctx.close()      # ongoing roots end only now, after tracing
        # threads of the batch's other cases and of this runner are bystanders: name them as such
        pids = {str(pid): c.id.split("-")[0] for c, _, truth, _ in live for pid, _ in truth["roles"]}
        for c, _, truth, _ in live:
            truth["batch"] = {p: i for p, i in pids.items() if i != c.id.split("-")[0]}
            truth["runner"] = os.getpid()
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            for res in pool.map(lambda x: _diagnose(argus, *x[:3]), [x for x in live if not x[2].get("broken")]):
                results[res["id"]].update(res, run=run_no)
    except Exception as e:  # noqa: BLE001 (a broken batch is ERROR rows, the corpus goes on)
        for r in results.values():
            if r["status"] == "ERROR" and not r["reason"]:
                r["reason"] = f"{type(e).__name__}: {e}"
    finally:
        if tracing:
            argus.stop()
        ctx.close()
        failing = [r for r in results.values() if r["status"] != "PASS"]
        if keep and failing:
            _keep(tmp, argus, batch, results, keep, run_no)
        shutil.rmtree(tmp, ignore_errors=True)
    return [results[c.id] for c in batch]


def _diagnose(argus, case, proc, truth):
    pid = truth["roles"][0][0]
    res = {"id": case.id, "truth": truth}
    common = ["--buffer", argus.buffer, "--pid", pid, "--json", "--threshold", THRESHOLD_S]
    t0 = time.monotonic()
    dbg = argus.run("debug", *common, "--auto", check=False)
    res["diagnose_s"] = round(time.monotonic() - t0, 2)
    hangs = argus.run("hangs", *common, check=False)
    err = (dbg.stderr or dbg.stdout).strip()
    report = None
    if dbg.returncode == 0:
        report = json.loads(dbg.stdout)
    elif dbg.returncode < 0 or "Traceback" in err or not err.startswith("argus:"):
        res.update(status="ERROR", reason="argus debug crashed: " + err[-300:])
        return res
    try:
        hang_list = json.loads(hangs.stdout)["hangs"] if hangs.returncode == 0 else []
    except (ValueError, KeyError):
        hang_list = []
    res["report"], res["hangs"] = report, hang_list
    res.update(score.score_case(case, truth, report, hang_list, err if report is None else ""))
    return res


def _keep(tmp, argus, batch, results, keep, run_no):
    """The batch's trace (sparse copy) and, per failing case, its source,
    ground truth, report and stderr, for whoever debugs the diagnosis."""
    dst = os.path.join(keep, f"run{run_no}-" + batch[0].id.split("-")[0])
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    if os.path.exists(argus.buffer):
        subprocess.run(["cp", "--sparse=always", argus.buffer, os.path.join(dst, "trace.argus")],
                       capture_output=True)
    for c in batch:
        r = results[c.id]
        if r["status"] == "PASS":
            continue
        cdir = os.path.join(dst, c.id)
        os.makedirs(cdir, exist_ok=True)
        text, ext = programs.source(c)
        with open(os.path.join(cdir, "program" + ext), "w") as f:
            f.write(text)
        with open(os.path.join(cdir, "result.json"), "w") as f:
            json.dump(r, f, indent=1)
        err = os.path.join(tmp, c.id, "stderr")
        if os.path.exists(err):
            shutil.copy(err, os.path.join(cdir, "stderr"))
        with open(os.path.join(cdir, "README"), "w") as f:
            f.write(f"argus debug --buffer {os.path.join(dst, 'trace.argus')} --pid "
                    f"{(r.get('truth') or {}).get('roles', [[None]])[0][0]} --auto\n")


def pick_cases(cases, spec):
    """The cases `spec` names (comma-separated): each an index ("051" or
    "51") or a prefix of a case id ("051-go-tcp"), matching exactly one
    case; in the order given.  ValueError names what matches no case, or
    more than one."""
    out = []
    for want in (w.strip() for w in spec.split(",")):
        if not want:
            continue
        hits = [c for c in cases if c.index == int(want)] if want.isdigit() \
            else [c for c in cases if c.id.startswith(want)]
        if len(hits) != 1:
            why = "no case" if not hits else f"{len(hits)} cases"
            raise ValueError(f"--cases {want}: {why} with that index or id prefix")
        if hits[0] not in out:
            out.append(hits[0])
    if not out:
        raise ValueError("--cases names no case")
    return out


def select_cases(args):
    # a case named by --cases is taken from the full set (the fast set is its first part)
    named = args.cases
    cases = gen.cases(args.seed, gen.FAST_N if args.fast and not named else gen.FULL_N)
    if named:
        cases = pick_cases(cases, named)
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - set(gen.MECHANISMS)
        if unknown:
            raise ValueError(f"unknown mechanism {', '.join(sorted(unknown))} (one of {', '.join(gen.MECHANISMS)})")
        cases = [c for c in cases if wanted & set(c.mechanisms())]
    if args.lang:
        langs = set(args.lang.split(","))
        unknown = langs - set(gen.ALL)
        if unknown:
            raise ValueError(f"unknown language {', '.join(sorted(unknown))} (one of {', '.join(gen.ALL)})")
        cases = [c for c in cases if c.lang in langs]
    return cases


def rescore(args):
    """The tables of a saved run, scored by this scorer (the reports as saved)."""
    try:
        with open(args.rescore) as f:
            saved = json.load(f)
        results = saved["results"]
    except (OSError, ValueError, KeyError) as e:
        print(f"run.py: cannot read {args.rescore}: {e}", file=sys.stderr)
        return 2
    cases = {c.id: c for c in gen.cases(saved.get("seed", 1), gen.FULL_N)}
    for r in results:
        if r.get("status") in ("PASS", "FAIL") and r["id"] in cases:
            r.update(score.score_case(cases[r["id"]], r["truth"], r.get("report"), r.get("hangs") or []))
    md = score.markdown(results, saved.get("runs", 1))
    print(md)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md)
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description="Score Argus on generated hangs (docs/scenarios.md, Generated corpus).")
    ap.add_argument("--fast", action="store_true", help=f"the first {gen.FAST_N} cases (default: all {gen.FULL_N})")
    ap.add_argument("--runs", type=int, default=1, help="run each case N times (stability)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", metavar="MECH", help="cases with one of these mechanisms (comma-separated)")
    ap.add_argument("--lang", metavar="LANG", help="cases in one of these languages (comma-separated: c, python, go)")
    ap.add_argument("--cases", metavar="ID",
                    help="only these cases (comma-separated: 3-digit index such as 051, or an id prefix)")
    ap.add_argument("--no-go-probes", action="store_true",
                    help="trace without the Go scheduler probes (to measure what they bring)")
    ap.add_argument("--detail", choices=("full", "lean", "auto"), default="full",
                    help="the recording tier the daemon runs at (argus start --detail; default full)")
    ap.add_argument("--jobs", type=int, default=4, help="cases traced at once under one daemon (default 4)")
    ap.add_argument("--keep", metavar="DIR", help="keep the traces and reports of failing cases under DIR")
    ap.add_argument("--json", metavar="FILE", help="write every result (reports included) here")
    ap.add_argument("--markdown", metavar="FILE", help="write the score tables as Markdown here")
    ap.add_argument("--limit", type=int, help="only the first N selected cases")
    ap.add_argument("--list", action="store_true", help="list the selected cases and exit")
    ap.add_argument("--rescore", metavar="FILE", help="score the reports saved by --json FILE again (no tracing)")
    args = ap.parse_args(argv)
    try:
        if args.runs < 1 or args.jobs < 1:
            raise ValueError("--runs and --jobs must be >= 1")
        cases = select_cases(args)[:args.limit]
    except ValueError as e:
        print(f"run.py: {e}", file=sys.stderr)
        return 2
    if args.rescore:
        return rescore(args)
    if args.list:
        for c in cases:
            print(f"{c.id:60} {c.hung_type:13} <- {c.root_type:13} {'ongoing' if c.ongoing else 'ended'}")
        return 0
    if os.geteuid() != 0:
        print("run.py: tracing needs root", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    errors = {}
    for c in cases:   # every program is built before tracing starts
        try:
            programs.build(c)
        except programs.BuildError as e:
            errors[c.id] = str(e)
    results = []
    for run_no in range(1, args.runs + 1):
        todo = [c for c in cases if c.id not in errors]
        for k in range(0, len(todo), args.jobs):
            batch = todo[k:k + args.jobs]
            print(f"[{time.monotonic() - t0:6.0f} s] run {run_no} batch {k // args.jobs + 1}: "
                  f"{', '.join(c.id.split('-')[0] for c in batch)}", file=sys.stderr, flush=True)
            flags = ["--detail", args.detail] + ([] if args.no_go_probes else ["--go-probes"])
            for r in run_batch(batch, args.keep, run_no, flags):
                print(f"    {r['id']}: {r['status']} {r.get('reason', '')}", file=sys.stderr, flush=True)
                results.append(r)
        results += [{"id": cid, "run": run_no, "status": "ERROR", "reason": why,
                     "case": next(c for c in cases if c.id == cid).to_dict()} for cid, why in errors.items()]
    md = score.markdown(results, args.runs)
    print(md)
    print(f"total {time.monotonic() - t0:.0f} s")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seed": args.seed, "runs": args.runs, "results": results,
                       "total_s": round(time.monotonic() - t0, 1)}, f, indent=1)
    return 1 if any(r["status"] == "ERROR" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
