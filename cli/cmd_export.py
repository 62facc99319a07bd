"""argus export --speedscope FILE: the CPU profiles of a hang's root causes
(or of one thread) as speedscope JSON, a flame graph any browser opens
(https://www.speedscope.app).  Other formats register beside this one."""
import sys

from argus.cli.common import ArgusError


def register(sub):
    from argus.cli.cmd_debug import _add_common
    p = sub.add_parser("export", help="export a hang's CPU profiles (speedscope JSON flame graph)")
    _add_common(p, "the process whose hang to export (default: the most recent hang)")
    p.add_argument("--at", type=float, metavar="SECONDS", help="the hang in progress at this time (seconds into the trace)")
    p.add_argument("--speedscope", metavar="FILE", type=str, required=True,
                   help="write the root causes' CPU profiles (LongRunning / RepeatedYield) as speedscope JSON")
    p.add_argument("--thread", type=int, default=None, metavar="TID",
                   help="profile this thread over the whole hang window instead of the root causes")
    p.set_defaults(func=run_export)


def run_export(args):
    from argus.cli import speedscope
    from argus.cli.cmd_debug import _graph, _hang_in_window
    from argus.diagnose import diagnose_hang, profile as P
    threshold_ns = int(args.threshold * 1e9)
    if args.pid is None and args.tid is not None:
        raise ArgusError("--tid needs --pid")
    trace, g, hang = _graph(args, None, _hang_in_window(args.pid, args.tid, args.at, None, threshold_ns,
                                                        [] if args.pid is None else None))
    if not P.has_samples(g):
        raise ArgusError("no CPU samples in this trace (traced with `argus start --no-sample`?)")
    if args.thread is not None:
        utid = g.utid_of_tid(args.thread, at=hang.start_ns)
        if utid is None:
            raise ArgusError(f"no thread {args.thread} in the trace")
        windows = [(f"{g.comm(utid)}/{args.thread}", utid, hang.start_ns, hang.end_ns)]
    else:
        d = diagnose_hang(g, hang, threshold_ns)
        windows = [(f"{g.comm(r.utid)}/{int(g.threads.tid[r.utid])} {r.block_type} depth {r.depth}", r.utid,
                    r.start_ns, r.end_ns) for r in d.root_causes if r.profile]
    doc = speedscope.document(g, windows, name=f"argus: hang of {g.comm(hang.utid)}/{hang.tid}")
    if not doc["profiles"]:
        raise ArgusError("no root cause of this hang has CPU samples (none ran on the CPU): try --thread TID")
    try:
        speedscope.write(args.speedscope, doc)
    except OSError as e:
        raise ArgusError(f"cannot write {args.speedscope}: {e.strerror}")
    n = sum(len(p["samples"]) for p in doc["profiles"])
    sys.stdout.write(f"wrote {len(doc['profiles'])} profile(s), {n} samples, to {args.speedscope}\n")
    return 0
