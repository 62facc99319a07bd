"""`follow` and `vertex` offer the edges Algorithm 1's walk takes: with no
incoming causal edge, the program-order edge to the same work before a
split (crafted graph, a real ReplContext and the REPL's command dispatch)."""
import io
import re
from types import SimpleNamespace

from rich.console import Console

from argus.cli.repl.app import execute
from argus.cli.repl.context import ReplContext
from argus.cli.repl.render import causal_in_edges
from argus.diagnose.report import fmt_rel
from argus.diagnose.slice import AutoChooser, interactive_slice
from support.crafted import ms, split_loop


def _client_daemon_repl():
    """(graph, diagnosis, REPL context at the hang, its output) of the
    crafted client/daemon hang, the diagnosis attached as `debug` does."""
    from support import crafted as C
    from argus.diagnose import diagnose
    t, info = C.client_daemon()
    g = t.build(trace_end=info["trace_end"])
    d = diagnose(g, C.APP)
    out = io.StringIO()
    ctx = ReplContext(g, d.hang, ms(2), console=Console(file=out, width=200, highlight=False))
    ctx.diagnosis = d
    return g, d, ctx, out


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
    poller's held-up peer): its vertex's own span says little, the panel
    shows only the diagnosis's LongRunning over the window it judged."""
    from support import crafted as C
    from argus.diagnose import diagnose
    g = C.gil_like(release=False)
    d = diagnose(g, 10)
    (rc,) = d.root_causes
    out = io.StringIO()
    ctx = ReplContext(g, d.hang, ms(2), console=Console(file=out, width=200, highlight=False))
    ctx.diagnosis = d
    execute(ctx, f"vertex {rc.vertex}")
    text = out.getvalue()
    assert re.search(r"^  block type \(path step \d+, \w+, over [^)]*\): LongRunning; on CPU", text, re.M), text
    assert "block type over that window" not in text and "LongWait" not in text, text


def test_vertex_shows_the_block_type_of_every_path_step():
    """Every vertex on the path, reached by `follow` (its place known) or by
    `vertex ID` (its first place): the block type `path` lists for it, over
    the window it was judged over, and nothing else; root causes also with
    their own when that differs."""
    g, d, ctx, out = _client_daemon_repl()
    for i in range(1, len(d.path)):
        out.seek(0), out.truncate()
        execute(ctx, "follow")
        execute(ctx, "vertex")
        p = d.path[i]
        a, b = p.block_window
        want = f"  block type (path step {i}, {p.role}, over {fmt_rel(a - d.hang.start_ns)} .. " \
               f"{fmt_rel(b - d.hang.start_ns)}): {p.block_type};"
        assert ctx.cursor == p.vertex and want in out.getvalue(), (want, out.getvalue())
        assert "block type over that window" not in out.getvalue()
    for i, p in enumerate(d.path):
        if p.vertex == ctx.cursor:          # not moved: the cursor keeps its place
            continue
        out.seek(0), out.truncate()
        execute(ctx, f"vertex {p.vertex}")
        first = next(k for k, q in enumerate(d.path) if q.vertex == p.vertex)
        assert f"  block type (path step {first}, {d.path[first].role}, over " in out.getvalue()
        assert f"): {d.path[first].block_type};" in out.getvalue()
    for r in d.root_causes:
        out.seek(0), out.truncate()
        execute(ctx, f"vertex {r.vertex}")
        assert re.search(rf"^  block type \((path step \d+, \w+|root cause), over [^)]*\): {r.block_type};",
                         out.getvalue(), re.M), out.getvalue()


def test_vertex_names_the_walks_next_step_where_no_edge_leads_back():
    """A path vertex with no causal in-edge of its own (started by a timer,
    the spinning vertex's successor): `vertex` names the step the walk took
    next instead of ending at "no incoming causal edge", and `follow N`
    points at plain `follow`."""
    g, d, ctx, out = _client_daemon_repl()
    bare = [i for i, p in enumerate(d.path[:-1]) if not causal_in_edges(g, p.vertex)
            and i == next(k for k, q in enumerate(d.path) if q.vertex == p.vertex)]
    assert bare, "the crafted path has no vertex without a causal in-edge"
    for i in bare:
        out.seek(0), out.truncate()
        execute(ctx, f"vertex {d.path[i].vertex}")
        assert "no incoming causal edge" not in out.getvalue(), out.getvalue()
        assert f"the walk's next step (follow): #{i + 1} vertex {d.path[i + 1].vertex}," in out.getvalue()
        execute(ctx, "follow 1")
        assert "follow: vertex" in out.getvalue() and f"(#{i + 1}, vertex {d.path[i + 1].vertex})" in out.getvalue()


def test_follow_walks_the_diagnosis_path_and_back_returns():
    """From the spinning vertex, `follow` takes the walk's steps in `path`
    order (the vertex after the wait first), never stranded while the path
    goes on; `back` retraces every move to the start."""
    g, d, ctx, out = _client_daemon_repl()
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
