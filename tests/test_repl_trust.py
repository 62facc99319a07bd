"""The REPL's smaller trust problems (issue 15, item 12), driven through a
pty (test_repl.Repl) on real traces:
  - `lldb` prints the stepped instructions as a table, never a Python list;
  - `flag-values` lists accesses in time order (the poller's reads and the
    worker's writes interleaved, as they happened);
  - one time origin: the header of `argus debug` and the REPL's `hangs` give
    the same start for the same hang, with the wall clock."""
import json
import os
import re
import subprocess
import sys

import pytest

pexpect = pytest.importorskip("pexpect")

from conftest import ArgusRunner, require_tracing  # noqa: E402
from support.programs import program
from test_repl import Repl, debug_args, record_demo  # noqa: E402

WALL = r"(\d+\.\d{3} s \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\))"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    require_tracing()
    return record_demo(tmp_path_factory.mktemp("trust-repl"), "run")


def test_lldb_table_and_one_time_origin(demo, tmp_path):
    runner, info = demo
    pid = info["app_pid"]
    # an `argus lldb-script` result for the app's main thread (docs/lldb.md)
    d = runner.buffer + ".lldb"
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"{pid}-{pid}.json"), "w") as f:
        json.dump({"schema": "argus.lldb-trace/1", "pid": pid, "tid": pid, "function": "app_loop",
                   "stop_reason": "max_steps", "error": None,
                   "instructions": [{"pc": 0x401000 + 4 * i, "function": "app_loop", "asm": f"mov eax, [rbx+{i}]",
                                     "mem": [{"addr": 0x7000 + i, "value": i}]} for i in range(3)],
                   "calls": [{"callee": "read", "module": "libc.so.6", "return_value": 0}]}, f)
    r = Repl(runner, tmp_path / "sessions.db", *debug_args(runner, info))
    r.answer_all()
    header = re.search(r"Hang in demo-app/\d+ .* from " + WALL, r.text())
    assert header, r.text()[-2000:]
    out = r.cmd("lldb")
    assert "['" not in out and "instruction" in out and "pc" in out, out
    assert re.search(r"^\s*2\s+0x401008\s+app_loop\s+mov eax, \[rbx\+2\]\s+\[0x7002\]=2", out, re.M), out
    assert "library calls: read (libc.so.6)" in out
    hangs = r.cmd("hangs")
    assert header.group(1) in hangs, (header.group(1), hangs)
    assert r.finish() == 0


def _ns(text):
    """fmt_rel text ("+1.500 s", "-20 us", "+0 ns") -> ns."""
    m = re.fullmatch(r"([+-])(\d+(?:\.\d+)?) (ns|us|ms|s)", text)
    return (-1 if m.group(1) == "-" else 1) * float(m.group(2)) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(3)]


def test_flag_values_in_time_order(tmp_path):
    require_tracing()
    runner = ArgusRunner(tmp_path)
    runner.start(size="512M")
    try:
        prog = subprocess.Popen([program("argus-flag-handshake"), "800", "200,200,2500", "3000"],
                                stdout=subprocess.PIPE, text=True)
        hs = json.loads(prog.stdout.readline())
        w = subprocess.run([sys.executable, "-m", "argus.cli.bp_watch", str(hs["pid"]), "argus-flag-handshake",
                            "handshake_flag", "--for", "4.5", "--json", "--buffer", runner.buffer],
                           env=runner.env, capture_output=True, text=True, timeout=120)
        assert w.returncode == 0, w.stderr
        assert prog.wait(timeout=60) == 0
        runner.wait_drained()
    finally:
        runner.stop()
    r = Repl(runner, tmp_path / "sessions.db", "--buffer", runner.buffer, "--pid", str(hs["pid"]),
             "--threshold", "1")
    r.answer_all()
    out = r.cmd("flag-values --all --limit 0")
    rows = re.findall(r"^\s*([+-][\d.]+ (?:ns|us|ms|s))\s+\S+/(\d+)\s+(read|write)\s", out, re.M)
    assert {int(t) for _, t, _ in rows} == {hs["main_tid"], hs["worker_tid"]}, out
    times = [_ns(a) for a, _, _ in rows]
    assert times == sorted(times), out
    kinds = [k for _, _, k in rows]
    assert kinds.index("write") < len(kinds) - 1 - kinds[::-1].index("read")   # interleaved, not grouped
    assert r.finish() == 0
