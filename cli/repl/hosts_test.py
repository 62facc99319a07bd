"""The REPL on a graph merged from two buffers (tests/support/crafted_hosts.py's
client on host web waiting on a server busy on host api): every command
names threads and processes as HOST:ID, never by the merged graph's ids,
and takes HOST:PID where it takes a pid."""
import io
import json

from rich.console import Console

from argus.cli.repl.app import execute
from argus.cli.repl.context import ReplContext
from argus.diagnose import algorithm
from argus.graphbuild import multihost as MH
from support.crafted import ms
from support.crafted_hosts import two_hosts as _hosts

RAW = str(MH.global_id(1, 100))         # the server's pid and tid in the merged graph


def _repl(paths=("a.argus", "b.argus")):
    g = _hosts(paths=paths)
    d = algorithm.diagnose(g, 100, threshold_ns=ms(2000))
    out = io.StringIO()
    ctx = ReplContext(g, d.hang, ms(2000), buffer=paths[0],
                      console=Console(file=out, width=250, highlight=False))
    ctx.diagnosis = d
    from argus.diagnose.report import to_json
    ctx.report = to_json(d)
    return g, d, ctx, out


def test_commands_name_the_other_hosts_threads_host_colon_id():
    g, d, ctx, out = _repl()
    (rc,) = [r for r in d.root_causes if r.primary]
    for line in ("path", "threads", "follow", "follow", f"vertex {rc.vertex}", f"events {rc.vertex}",
                 f"profile {rc.vertex}", "hangs --pid api:100", "threads --pid api:100"):
        execute(ctx, line)
    text = out.getvalue()
    assert RAW not in text, text
    assert "server/api:100" in text and "client/web:100" in text
    assert text.count("server/api:100") >= 4, text   # path, threads (both), vertex


def test_a_pid_of_an_unknown_host_is_one_line():
    g, d, ctx, out = _repl()
    execute(ctx, "threads --pid db:7")
    assert "no host db (hosts: web, api)" in out.getvalue()


def test_lldb_finds_the_other_hosts_trace_next_to_its_buffer(tmp_path):
    """`argus lldb-script` run on host api stores 100-100.json next to api's
    buffer, under api's own pid and tid; the merged graph's ids are shifted."""
    paths = (str(tmp_path / "a.argus"), str(tmp_path / "b.argus"))
    g, d, ctx, out = _repl(paths)
    (tmp_path / "b.argus.lldb").mkdir()
    doc = {"schema": "argus.lldb-trace/1", "pid": 100, "tid": 100, "function": "compute", "stop_reason": "limit",
           "instructions": [{"pc": 0x401000, "function": "compute", "asm": "imul rax, rbx"}], "calls": []}
    (tmp_path / "b.argus.lldb" / "100-100.json").write_text(json.dumps(doc))
    ctx.run_diagnosis(auto=True)
    assert any(n.startswith("lldb trace of server/api:100") for n in ctx.diagnosis.notes), ctx.diagnosis.notes
    (rc,) = [r for r in ctx.diagnosis.root_causes if r.primary]
    execute(ctx, f"lldb {rc.vertex}")
    assert "imul rax, rbx" in out.getvalue()
    execute(ctx, f"lldb {d.hang.vertex}")       # the client on web has none
    assert "no lldb trace for client/web:100" in out.getvalue()
