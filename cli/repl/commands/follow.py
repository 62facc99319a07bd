"""follow: walk back along an incoming causal edge of the cursor."""
from argus.cli.repl.registry import CommandParser, command, ReplUsageError
from argus.cli.repl.render import causal_in_edges, vertex_panel

parser = CommandParser("follow", "Move the cursor back along incoming causal edge #N of the cursor vertex "
                                 "(numbers as listed by `vertex`); without N, to the step the diagnosis's walk "
                                 "took next (as `path` lists it: the vertex after a wait, a baseline, a culprit), "
                                 "else the only (or most recent) edge.")
parser.add_argument("n", nargs="?", type=int, help="edge number from the `vertex` listing (1 = most recent)")


@command(parser, aliases=("f",), category="walk")
def run(ctx, args):
    step = ctx.path_next() if args.n is None else None
    if step is not None:
        i, p = step
        edge = (p.edge or {}).get("type") or "-"
        ctx.move(p.vertex, path_index=i)
        ctx.out(f"the walk's step {i} ({p.role}, edge {edge}):")
        ctx.out(vertex_panel(ctx, ctx.cursor))
        return
    ins = causal_in_edges(ctx.g, ctx.cursor)
    if not ins and ctx.path_next() is not None:
        i, p = ctx.path_next()
        raise ReplUsageError(f"follow: vertex {ctx.cursor} has no edge #{args.n}; `follow` without a number "
                             f"takes the walk's next step (#{i}, vertex {p.vertex})")
    if not ins:
        ctx.out(f"vertex {ctx.cursor} has no incoming causal edge (started by {ctx.g.start_label(ctx.cursor)})")
        return
    n = 1 if args.n is None else args.n
    if not 1 <= n <= len(ins):
        raise ReplUsageError(f"follow: no edge #{n} (1..{len(ins)})")
    e = ins[n - 1]
    ctx.move(int(ctx.g.edges.src[e]))
    ctx.out(vertex_panel(ctx, ctx.cursor))
