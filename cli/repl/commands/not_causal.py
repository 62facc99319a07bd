"""not-causal: mark an edge as not causal (remembered as a rule)."""
from argus.cli.repl.registry import CommandParser, command, ReplUsageError
from argus.diagnose import rules as R
from argus.diagnose.slice import EdgeRef

parser = CommandParser("not-causal", "Mark edge EDGE (an id from `vertex`) as not causal.  Remembered as a "
                                     "rule keyed by process / thread names, edge type and wait kind: later "
                                     "diagnoses, on this and other traces, never follow such an edge.")
parser.add_argument("edge", type=int, help="edge id (the `edge` column of `vertex`)")


@command(parser, category="annotate")
def run(ctx, args):
    g = ctx.g
    if not 0 <= args.edge < g.num_edges:
        raise ReplUsageError(f"not-causal: no edge {args.edge}")
    e = EdgeRef.of(g, args.edge)
    rule = R.not_causal_rule(g, e)
    rid = ctx.add_rule(rule, "not_causal", args.edge, rule["key"])
    k = rule["key"]
    ctx.out(f"rule{'' if rid is None else ' ' + str(rid)}: {k['edge_type']} edges {k['src_process']}:"
            f"{k['src_thread']} -> {k['dst_process']}:{k['dst_thread']} ending a {k['wait']} wait are not causal "
            f"(run diagnose again to apply it{'' if rid is None else f'; undo: argus rules rm {rid}'})")
