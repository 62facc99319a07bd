"""flag-values and lldb on a crafted graph, through the REPL's own dispatch."""
import json
import os

from rich.console import Console

from argus.cli.repl import app
from argus.cli.repl.context import ReplContext
from argus.diagnose import find_hang
from support.crafted import yield_app


def _ctx(tmp_path, flags=True):
    g = yield_app(flags)
    hang = find_hang(g, 600, threshold_ns=1_000_000_000)
    console = Console(record=True, width=160, force_terminal=False)
    return ReplContext(g, hang, 1_000_000_000, buffer=str(tmp_path / "t.argus"), console=console)


def test_flag_values_lists_the_writer_and_the_polls(tmp_path):
    ctx = _ctx(tmp_path)
    app.execute(ctx, "flag-values --limit 3")
    out = ctx.console.export_text()
    assert "worker/601" in out and "write" in out and "0x6000a0" in out
    assert "showing the last 3" in out
    app.execute(ctx, "flag-values --writes --all")
    out = ctx.console.export_text()
    assert "4 access(es), 4 write(s), 0 read(s)" in out


def test_flag_values_without_flags_says_how_to_get_them(tmp_path):
    ctx = _ctx(tmp_path, flags=False)
    app.execute(ctx, "flag-values")
    assert "bp_watch PID IMAGE SYMBOL" in ctx.console.export_text()


def test_lldb_traces_show_in_the_repl_and_the_report(tmp_path):
    ctx = _ctx(tmp_path)
    d = tmp_path / "t.argus.lldb"
    d.mkdir()
    doc = {"schema": "argus.lldb-trace/1", "pid": 600, "tid": 601, "function": "compute",
           "stop_reason": "limit", "instructions": [{"pc": 0x401000, "function": "compute", "asm": "add rax, 1"}],
           "calls": []}
    (d / "600-601.json").write_text(json.dumps(doc))
    ctx.run_diagnosis(auto=True)
    assert any("lldb trace of worker/601" in n for n in ctx.diagnosis.notes)
    worker_vertex = next(rc.vertex for rc in ctx.diagnosis.root_causes if int(ctx.g.threads.tid[rc.utid]) == 601)
    app.execute(ctx, f"lldb {worker_vertex}")
    assert "add rax, 1" in ctx.console.export_text()
    app.execute(ctx, "lldb")
    assert "no lldb trace for ui/600" in ctx.console.export_text()
