"""profile: where a vertex's thread spent its CPU time (sampled stacks)."""
from argus.cli.repl.registry import CommandParser, ReplUsageError, command
from argus.cli.repl.render import thread_label
from argus.diagnose import profile as P

parser = CommandParser("profile", "Show where a vertex's thread spent its CPU time, from the trace's CPU samples: "
                                  "by shared object and function, bottom-up and top-down.  For a root-cause vertex "
                                  "of the last diagnosis the window is the root cause's, else the vertex's span.")
parser.add_argument("id", nargs="?", type=int, help="vertex id (default: the cursor)")
parser.add_argument("--depth", type=int, default=8, help="top-down tree levels to show (default 8, 0: none)")
parser.add_argument("--top", type=int, default=10, help="functions to list bottom-up (default 10)")


@command(parser)
def run(ctx, args):
    v = ctx.check_vertex(args.id)
    g = ctx.g
    if not P.has_samples(g):
        raise ReplUsageError("profile: no CPU samples in this trace (traced with `argus start --no-sample`?)")
    utid = int(g.seg.utid[v])
    a, b = int(g.seg.start[v]), int(g.seg.end[v])
    for r in (ctx.diagnosis.root_causes if ctx.diagnosis is not None else ()):
        if r.vertex == v:
            a, b = int(r.start_ns), int(r.end_ns)
    p = P.build_profile(g, utid, a, b, top=max(args.top, 1))
    ctx.out(f"vertex {v}: {thread_label(g, utid)}")
    for line in P.render_profile(p, indent="", tree_depth=max(args.depth, 0), bottom_up=max(args.top, 1)):
        ctx.out(line)
