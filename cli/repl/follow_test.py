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


def test_vertex_shows_the_block_type_the_diagnosis_gave_a_culprit():
    """A culprit computing over the hang (gil_like's worker, found as the
    poller's held-up peer): its vertex's own window says little, the panel
    also shows the diagnosis's LongRunning over the root cause's window."""
    from support import crafted as C
    from argus.diagnose import diagnose
    g = C.gil_like(release=False)
    d = diagnose(g, 10)
    (rc,) = d.root_causes
    out = io.StringIO()
    ctx = ReplContext(g, d.hang, ms(2), console=Console(file=out, width=200, highlight=False))
    ctx.diagnosis = d
    execute(ctx, f"vertex {rc.vertex}")
    assert "in the diagnosis (root cause, over " in out.getvalue() and "): LongRunning; on CPU" in out.getvalue()


def test_follow_walks_the_diagnosis_path_and_back_returns():
    """From the spinning vertex, `follow` takes the walk's steps in `path`
    order (the vertex after the wait first), never stranded while the path
    goes on; `back` retraces every move to the start."""
    from support import crafted as C
    from argus.diagnose import diagnose
    t, info = C.client_daemon()
    g = t.build(trace_end=info["trace_end"])
    d = diagnose(g, C.APP)
    out = io.StringIO()
    ctx = ReplContext(g, d.hang, ms(2), console=Console(file=out, width=200, highlight=False))
    ctx.diagnosis = d
    seen = [ctx.cursor]
    for _ in range(min(10, len(d.path) - 1)):
        execute(ctx, "follow")
        seen.append(ctx.cursor)
    assert "no incoming causal edge" not in out.getvalue()
    assert seen == [p.vertex for p in d.path[:len(seen)]]
    for _ in range(len(seen) - 1):
        execute(ctx, "back")
    assert ctx.cursor == d.hang.vertex and ctx.path_index is None
    execute(ctx, "back")
    assert "already at the start" in out.getvalue()


def test_repl_events_uses_the_events_commands_formatter():
    """One per-record formatter (cmd_events.describe) for `argus events` and
    the REPL's `events`: the same details for the same rows."""
    from support import crafted as C
    from argus.cli import cmd_events
    from argus.cli.tracefile import ThreadNames
    t, info = C.client_daemon()
    g = t.build(trace_end=info["trace_end"])
    v = int(g.thread_segments(g.utid_of_tid(C.APP))[1])
    out = io.StringIO()
    ctx = ReplContext(g, SimpleNamespace(vertex=v, start_ns=0), ms(2),
                      console=Console(file=out, width=300, highlight=False))
    execute(ctx, f"events {v} --limit 0")
    names = ThreadNames(g.rows)
    rows = g.rows[g.segment_rows(v)]
    assert len(rows) > 2
    lines = out.getvalue().splitlines()
    for r, line in zip(rows, lines):
        assert line.endswith(cmd_events.describe(r, names, g)), (line, cmd_events.describe(r, names, g))
