"""baseline: the similar vertices whose wait ended quickly (paper §5.4)."""
from argus.cli.repl.registry import CommandParser, command, ReplUsageError
from argus.cli.repl.render import thread_label
from argus.diagnose.baseline import find_wait_baselines, group_by_signature
from argus.diagnose.report import fmt_dur, fmt_rel
from argus.graphbuild import graph as G

parser = CommandParser("baseline", "List baseline candidates for the cursor vertex's wait (similar waits that "
                                   "ended quickly by a task's wakeup), one per kind of wake-up; with N, move the "
                                   "cursor to baseline #N's woken vertex to walk its wake-up path.")
parser.add_argument("n", nargs="?", type=int, help="baseline number to move to")
parser.add_argument("--all", action="store_true", help="every candidate, not one per kind of wake-up")


@command(parser, category="walk")
def run(ctx, args):
    g = ctx.g
    v = ctx.cursor
    if g.seg.end_kind[v] != G.END_BLOCKED:
        ctx.out(f"vertex {v} does not end in a blocking wait: no baseline to look for")
        return
    start = ctx.hang.start_ns if v == ctx.hang.vertex else int(g.seg.wait_start[v])
    cands = find_wait_baselines(g, v, ctx.threshold_ns, hang_start=start)
    shown = cands if args.all else group_by_signature(g, cands)
    if not shown:
        ctx.out("no baseline: no similar wait ended quickly by a task's wakeup")
        return
    if args.n is not None:
        if not 1 <= args.n <= len(shown):
            raise ReplUsageError(f"baseline: no #{args.n} (1..{len(shown)})")
        b = shown[args.n - 1]
        ctx.move(b.successor)
        ctx.out(f"cursor at vertex {b.successor}, woken at the end of baseline wait {b.vertex}; "
                f"`follow` walks its wake-up path")
        return
    for i, b in enumerate(shown):
        w = int(g.seg.utid[int(g.edges.src[b.edge])])
        ctx.out(f"{i + 1:>3}  vertex {b.vertex}: {fmt_dur(b.wait_ns)} wait at {fmt_rel(b.wait_start_ns - ctx.t0)}, "
                f"woken by {thread_label(g, w)}; similarity {b.similarity}, "
                f"{'same thread' if b.same_thread else 'peer thread'}{', same object' if b.same_obj else ''}")
    if not args.all and len(cands) > len(shown):
        ctx.out(f"({len(cands)} candidates in all; baseline --all lists them)")
