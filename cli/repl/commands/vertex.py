"""vertex: show a vertex (execution segment) and its edges; moves the cursor."""
from argus.cli.repl.registry import CommandParser, command
from argus.cli.repl.render import vertex_panel, edge_table, causal_in_edges

parser = CommandParser("vertex", "Show a vertex: its thread, span, wait, block type and causal edges.\n"
                                 "Without an argument: the cursor (initially the spinning vertex).")
parser.add_argument("id", nargs="?", type=int, help="vertex id (moves the cursor there)")


@command(parser, aliases=("v",))
def run(ctx, args):
    v = ctx.check_vertex(args.id)
    if args.id is not None and v != ctx.cursor:
        ctx.move(v)
    ctx.out(vertex_panel(ctx, v))
    ins = causal_in_edges(ctx.g, v)
    step = ctx.path_next(v)
    if step is not None:            # where the diagnosis went next, whatever edges v has
        i, p = step
        ctx.out(f"the walk's next step (follow): #{i} vertex {p.vertex}, {p.role}, edge {(p.edge or {}).get('type') or '-'}")
    if ins:
        ctx.out("incoming causal edges, or the program-order edge the walk takes (follow N walks back along "
                "#N; not-causal EDGE marks one):")
        ctx.console.print(edge_table(ctx, ins))
    elif step is None:
        ctx.out(f"no incoming causal edge (started by {ctx.g.start_label(v)})")
    else:
        ctx.out(f"(it has no causal in-edge of its own: started by {ctx.g.start_label(v)})")
