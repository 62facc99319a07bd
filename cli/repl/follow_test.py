"""`follow` and `vertex` offer the edges Algorithm 1's walk takes: with no
incoming causal edge, the program-order edge to the same work before a
split (crafted graph, a real ReplContext and the REPL's command dispatch)."""
import io
from types import SimpleNamespace

from rich.console import Console

from argus.cli.repl.app import execute
from argus.cli.repl.context import ReplContext
from argus.diagnose.slice import AutoChooser, interactive_slice
from support.crafted import ms, split_loop


def test_follow_takes_the_walks_program_order_edge():
    g = split_loop()
    v = int(g.thread_segments(g.utid_of_tid(10))[2])
    walk = interactive_slice(g, v, AutoChooser()).vertices
    out = io.StringIO()
    ctx = ReplContext(g, SimpleNamespace(vertex=v, start_ns=0), ms(2),
                      console=Console(file=out, width=200, highlight=False))
    execute(ctx, "vertex")
    assert "program_order (weak)" in out.getvalue() and "no incoming causal edge" not in out.getvalue()
    for expected in walk[1:]:
        execute(ctx, "follow")
        assert ctx.cursor == expected, out.getvalue()
