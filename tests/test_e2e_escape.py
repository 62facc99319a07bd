"""A traced process that names itself with terminal escape sequences and rich
markup: `argus events` and the `argus debug` REPL (in a real pty) print the
name escaped, never the raw control codes or the markup's styling."""
import json
import subprocess
import sys

import pytest

from conftest import ArgusRunner, native, require_tracing

pexpect = pytest.importorskip("pexpect")

EVIL = "\x1b[8m[bold]ev\x07"          # 13 bytes: hides what follows, then rings
SHOWN = "\\e[8m[bold]ev\\x07"
QUESTION_OR_PROMPT = r"(predecessor|weak|baseline|owner|go_on) #\d+(?:\.\d+)? \[[^\]]*\]>|\(argus:\d+\)"


@pytest.fixture(scope="module")
def evil_trace(tmp_path_factory):
    """The demo hang whose app names itself EVIL (prctl(PR_SET_NAME))."""
    require_tracing()
    tmp = tmp_path_factory.mktemp("escape")
    runner = ArgusRunner(tmp)
    runner.env["ARGUS_SESSION_DB"] = str(tmp / "sessions.db")
    runner.start(size="1G")
    try:
        proc = subprocess.Popen([native("argus-demo-hang"), "--requests", "40", "--hang-at", "30", "--hang-ms",
                                 "2500", "--interval-ms", "20", "--app-name", EVIL], stdout=subprocess.PIPE, text=True)
        info = json.loads(proc.stdout.readline())
        proc.stdout.read()
        assert proc.wait(timeout=120) == 0
        runner.wait_drained()
    finally:
        runner.stop()
    return runner, info


def test_events_text_escapes_the_name(evil_trace):
    runner, info = evil_trace
    out = runner.run("events", "--buffer", runner.buffer, "--pid", str(info["app_pid"])).stdout
    assert SHOWN in out
    assert "\x1b" not in out and "\x07" not in out
    # --json keeps the name itself (json.dumps escapes it)
    rows = [json.loads(l) for l in runner.run("events", "--buffer", runner.buffer, "--pid", str(info["app_pid"]),
                                              "--type", "thread_name", "--json").stdout.splitlines()]
    assert EVIL in [r["new_comm"] for r in rows]


def test_repl_escapes_the_name(evil_trace, tmp_path):
    runner, info = evil_trace
    env = dict(runner.env, ARGUS_SESSION_DB=str(tmp_path / "s.db"), PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm",
               HOME=str(tmp_path))
    child = pexpect.spawn(sys.executable, ["-m", "argus.cli", "debug", "--buffer", runner.buffer, "--pid",
                                           str(info["app_pid"]), "--threshold", "1"],
                          env=env, encoding="utf-8", timeout=180, dimensions=(60, 220))
    try:
        child.expect(QUESTION_OR_PROMPT)
        shown = child.before
        child.sendline("threads")
        child.expect(r"\(argus:\d+\)|" + QUESTION_OR_PROMPT)
        shown += child.before
    finally:
        child.sendcontrol("d")
        child.sendline("quit")
        child.close(force=True)
    assert "Hang in " + SHOWN in shown
    # the name's own escape never reaches the terminal (rich's and
    # prompt_toolkit's styling codes do: they are not \x1b[8m)
    assert "\x1b[8m" not in shown and "\x07" not in shown
    assert "Traceback" not in shown
