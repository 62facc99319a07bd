"""argus lldb-script: generated scripts are safe to generate and really trace.

  - quoting: a symbol name and paths full of quotes, backslashes, newlines and
    code reach the script only as data: the generated module's code is the
    template's, and PARAMS round-trips exactly.
  - a generated script runs (with Python's lldb module, and under the `lldb`
    binary) against flag_handshake's poll loop: an instruction trace with
    capstone disassembly, the flag read in handshake_check, library calls
    (sched_yield, usleep in libc) stepped over with their return values, a
    full stack at handshake_check's entry; the process then completes its
    handshake normally (exit 0).
  - one-line errors for a missing process, thread, diagnosis file.
"""
import ast
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import no_traceback
from test_bp_watch import require_root, start_handshake, thread_states

NASTY = "f'o\"o\\\n__import__('os').system('touch /tmp/pwned')#"


def _template():
    import argus.scripts.lldb.generate as gen
    with open(gen.TEMPLATE) as f:
        return f.read()


def test_generated_script_quotes_safely(tmp_path):
    import argus.scripts.lldb.generate as gen
    params = {"pid": 1, "tid": 2, "function": NASTY, "image": "/tmp/a'b\"c/lib x.so", "app_modules": [NASTY],
              "vertex": 7, "max_steps": 5, "timeout_s": 1.0, "result": str(tmp_path / "r'\"\n.json")}
    text = gen.generate(params)
    mod = ast.parse(text)
    # statement 0: import json; 1: PARAMS = json.loads("<literal>"); the rest is the template, unchanged
    assert isinstance(mod.body[0], ast.Import) and mod.body[0].names[0].name == "json"
    assign = mod.body[1]
    assert isinstance(assign, ast.Assign) and assign.targets[0].id == "PARAMS"
    call = assign.value
    assert ast.unparse(call.func) == "json.loads" and len(call.args) == 1
    assert isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)
    assert json.loads(call.args[0].value) == params
    assert ast.dump(ast.Module(body=mod.body[2:], type_ignores=[])) == ast.dump(ast.parse(_template()))
    with pytest.raises(ValueError):
        gen.generate(dict(params, code="x"))


def _result(buffer, pid, tid):
    import argus.scripts.lldb.generate as gen
    docs = gen.results_for(buffer, pid, tid)
    assert len(docs) == 1, docs
    return docs[0]


def _check_poll_loop_trace(res, steps):
    assert res["schema"] == "argus.lldb-trace/1" and res["error"] is None, res["error"]
    assert res["stop_reason"] == "max_steps"
    ins = res["instructions"]
    assert len(ins) == steps
    assert all(i["asm"] and i["bytes"] and len(i["bytes"]) == 2 * i["size"] for i in ins)
    funcs = {i["function"] for i in ins}
    assert {"handshake_wait", "handshake_check"} <= funcs
    # the flag read: a rip-relative load in handshake_check
    assert any(i["function"] == "handshake_check" and "rip +" in i["asm"] and i["asm"].startswith("mov")
               for i in ins)
    calls = {(c["callee"], c["module"], c["return_value"]) for c in res["calls"]}
    assert ("sched_yield", "libc.so.6", 0) in calls and ("usleep", "libc.so.6", 0) in calls
    # nothing inside libc was stepped into
    assert not [i for i in ins if i["module"] != "argus-flag-handshake"]
    entry = [s for s in res["stacks"] if s["function"] == "handshake_check"]
    assert entry and [f["function"] for f in entry[0]["frames"][:3]] == ["handshake_check", "handshake_wait", "main"]


@pytest.mark.parametrize("runner", ["python", "lldb"])
def test_script_traces_poll_loop(argus_cli, tmp_path, runner):
    require_root()
    pytest.importorskip("lldb")
    if runner == "lldb" and not shutil.which("lldb"):
        pytest.skip("no lldb command (pip install 'argus[lldb]')")
    buf = str(tmp_path / "trace.argus")
    # One long round that starts well after lldb has attached: the entry
    # breakpoint must catch the poller at the start of a spin that outlasts
    # the 120 steps even on a loaded machine (a short first round let the
    # function return before the step budget ran out).
    prog, info = start_handshake(5000, [10000], 500)
    pid = info["pid"]
    try:
        steps = 120
        args = ["lldb-script", "--pid", str(pid), "--function", "handshake_wait", "--buffer", buf,
                "--max-steps", str(steps)]
        if runner == "python":
            out = argus_cli.run(*args, "--run").stdout
            assert f"{steps} instructions" in out
        else:
            argus_cli.run(*args)
            script = os.path.join(buf + ".lldb", f"trace_{pid}_{pid}.py")
            assert oct(os.stat(script).st_mode & 0o777) == "0o600"
            from argus.debugger.backends.lldb import env_for_scripts
            proc = subprocess.run(["lldb", "--batch", "-o", f"command script import {script}"],
                                  env=env_for_scripts(), capture_output=True, text=True, timeout=300)
            assert "argus lldb trace:" in proc.stdout, proc.stdout + proc.stderr
        res = _result(buf, pid, pid)
        assert oct(os.stat(res["path"]).st_mode & 0o777) == "0o600"
        _check_poll_loop_trace(res, steps)
        assert not [s for s in thread_states(pid).values() if s in "tT"]
    finally:
        assert prog.wait(timeout=60) == 0       # the handshake completed after lldb left


def test_errors_are_one_line(argus_cli, tmp_path):
    def err(*args):
        proc = argus_cli.run("lldb-script", *args, "--buffer", str(tmp_path / "b"), check=False)
        assert proc.returncode != 0
        return no_traceback(proc)
    assert "no such process 999999999" in err("--pid", "999999999")
    assert f"has no thread 999999999" in err("--pid", str(os.getpid()), "--tid", "999999999")
    assert "cannot read" in err("--diagnosis", str(tmp_path / "missing.json"))
    (tmp_path / "bad.json").write_text("{not json")
    assert "is not JSON" in err("--diagnosis", str(tmp_path / "bad.json"))
    (tmp_path / "empty.json").write_text(json.dumps({"root_causes": []}))
    assert "has no root causes" in err("--diagnosis", str(tmp_path / "empty.json"))


def test_flags_finds_the_polled_flag(argus_cli, tmp_path):
    """argus flags (paper §4.3 automated) on flag_handshake: record the poll loop
    while it spins, then a run in which the worker's store ends it (the worker
    is gated: SIGUSR2 starts its round once the recording runs); the control
    flow diverges at the loop's branch and the read before it is the flag."""
    require_root()
    pytest.importorskip("lldb")
    import signal
    import time
    buf = str(tmp_path / "trace.argus")
    prog, info = start_handshake(100, [600, 60000], 500, gated=True)
    pid = info["pid"]
    try:
        base = ["flags", "--pid", str(pid), "--function", "handshake_wait", "--buffer", buf]
        out = argus_cli.run(*base, "--record", "spinning", "--max-steps", "150").stdout
        assert "stop: max_steps" in out, out
        normal = subprocess.Popen([sys.executable, "-m", "argus.cli", *base, "--record", "normal",
                                   "--max-steps", "5000"], env=argus_cli.env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while _tracer(pid) == 0 and time.monotonic() < deadline and normal.poll() is None:
            time.sleep(0.1)
        time.sleep(1.0)                          # it is stepping the loop now
        os.kill(pid, signal.SIGUSR2)             # round 1: the worker stores 1 after 600 ms
        out, err = normal.communicate(timeout=300)
        assert "stop: returned" in out, out + err
        rep = argus_cli.json("flags", "--pid", str(pid), "--buffer", buf, "--json")
        top = rep["divergences"][0]
        assert top["function"] == "handshake_wait" and top["asm"].startswith("j")
        op = top["operands"][0]
        assert op["addr"] == info["flag_addr"] and op["size"] == 4 and op["differs"]
        assert op["symbol"] == "argus-flag-handshake:handshake_flag"
        assert op["spinning_values"] == [0] and op["normal_values"] == [1]
        assert op["bp_watch"] == f"bp_watch {pid} argus-flag-handshake handshake_flag"
    finally:
        prog.kill()
        prog.wait()


def _tracer(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(next(l for l in f if l.startswith("TracerPid:")).split()[1])


def test_render_text_of_a_result():
    import argus.scripts.lldb.generate as gen
    doc = {"schema": gen.SCHEMA, "pid": 5, "tid": 6, "function": "f", "stop_reason": "max_steps", "error": None,
           "instructions": [{"pc": 0x10, "function": "f", "asm": "mov eax, dword ptr [rip + 8]",
                             "mem": [{"addr": 0x20, "value": 3}]}],
           "calls": [{"callee": "usleep", "module": "libc.so.6", "return_value": 0}] * 2}
    lines = gen.render_text(doc)
    assert lines[0] == "lldb trace of thread 6 (pid 5) from f: 1 instructions, 2 library calls, stop: max_steps"
    assert lines[1] == "  0x10 f: mov eax, dword ptr [rip + 8]  [0x20]=3"
    assert lines[2] == "  library calls: usleep (libc.so.6) x2 -> [0]"


def test_timeout_interrupts_a_step_out_of_a_long_sleep(argus_cli, tmp_path):
    """No function: the script climbs out of libc's nanosleep into the app.
    A synchronous step-out waited for the sleep to end (a minute past a
    --timeout 2); now it is interrupted at the deadline (stop_reason
    "timeout") and the process runs on."""
    require_root()
    pytest.importorskip("lldb")
    buf = str(tmp_path / "trace.argus")
    prog = subprocess.Popen(["sleep", "300"])
    try:
        proc = argus_cli.run("lldb-script", "--pid", str(prog.pid), "--buffer", buf, "--timeout", "2", "--run",
                             timeout=45)
        assert "stop: timeout" in proc.stdout, proc.stdout + proc.stderr
        res = _result(buf, prog.pid, prog.pid)
        assert res["stop_reason"] == "timeout" and res["error"] is None
        assert thread_states(prog.pid)[prog.pid] == "S"     # detached: sleeping again, not stopped
    finally:
        prog.kill()
        prog.wait()
