"""The `argus debug` REPL driven through a real pseudo-terminal (pexpect) on
real recorded traces of the bundled demo: answering questions, every
command, Ctrl-C, Ctrl-D and nonsense at every kind of prompt.  After each
run: the exit code (0, or 130 for Ctrl-C while loading), no traceback, a
sane terminal (stty after the REPL exits in the same pty) and the session
in the SQLite store."""
import json
import os
import re
import sqlite3
import stat
import subprocess
import sys

import pytest

pexpect = pytest.importorskip("pexpect")

from conftest import ArgusRunner, require_tracing, run_demo  # noqa: E402

QUESTION = r"(predecessor|weak|baseline|owner|go_on) #(\d+)(?:\.(\d+))? \[[^\]]*\]>"
PROMPT = r"\(argus:(\d+)\)"
ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]|\x1b[=>]|\r")


def record_demo(tmp, stuck):
    runner = ArgusRunner(tmp)
    runner.env["ARGUS_SESSION_DB"] = str(tmp / "sessions-default.db")   # never the user's store
    runner.buffer = str(tmp / f"{stuck}.argus")
    runner.start(size="1G")   # sparse; a yield storm wraps 256M and loses the hang's start
    try:
        info, rc = run_demo("--requests", "40", "--hang-at", "30", "--hang-ms", "3000",
                            "--interval-ms", "20", "--stuck", stuck)
        assert rc == 0
        runner.wait_drained()
    finally:
        runner.stop()
    return runner, info


@pytest.fixture(scope="module")
def demos(tmp_path_factory):
    require_tracing()
    tmp = tmp_path_factory.mktemp("repl")
    return {k: record_demo(tmp, k) for k in ("run", "sleep")}


class Repl:
    """`argus debug` in a pty.  The command runs under `sh -c '...; stty -a'`
    so the terminal state after argus exits can be checked (bash: it goes on
    after a child that handled Ctrl-C and exited 130)."""

    def __init__(self, runner, db, *args, timeout=120):
        self.db = str(db)
        env = dict(runner.env, ARGUS_SESSION_DB=self.db, PROMPT_TOOLKIT_NO_CPR="1", TERM="xterm",
                   HOME=os.path.dirname(self.db))
        argv = " ".join([sys.executable, "-m", "argus.cli", "debug", *args])
        self.child = pexpect.spawn("/bin/bash", ["-c", f"{argv}; echo ARGUS-EXIT=$?; stty -a"], env=env,
                                   encoding="utf-8", timeout=timeout, dimensions=(60, 220))
        self.questions = []
        self.numbers = []           # (question number, attempt) of each new question prompt
        self.log = []
        self.last_q, self.last_p = (0, 0), 0

    def text(self):
        return ANSI.sub("", "".join(self.log))

    def _expect(self, patterns):
        i = self.child.expect(patterns)
        self.log.append(self.child.before + (self.child.after if isinstance(self.child.after, str) else ""))
        return i

    def _next(self):
        """The next new question (kind) or command prompt (None); redraws of
        answered prompts (same number) are skipped."""
        while True:
            i = self._expect([QUESTION, PROMPT])
            if i == 0:
                m = self.child.match
                n = (int(m.group(2)), int(m.group(3) or 1))      # (question, attempt)
                if n > self.last_q:
                    self.last_q = n
                    self.numbers.append(n)
                    return m.group(1)
            else:
                n = int(self.child.match.group(1))
                if n > self.last_p:
                    self.last_p = n
                    self.out_start = len(self.log)
                    return None

    def answer_all(self, answer=lambda kind: ""):
        """Answers every question with answer(kind) until the command prompt."""
        while True:
            kind = self._next()
            if kind is None:
                return
            self.questions.append(kind)
            a = answer(kind)
            if a == "^C":
                self.child.sendintr()
            elif a == "^D":
                self.child.sendeof()
            else:
                self.child.sendline(a)

    def cmd(self, line, answer=None):
        """Runs a command line; returns its output (up to the next prompt)."""
        self.child.sendline(line)
        start = len(self.log)
        if answer is not None:
            self.answer_all(answer)
        else:
            assert self._next() is None
        out = ANSI.sub("", "".join(self.log[start:]))
        return out.split(line, 1)[1] if line and line in out else out

    def finish(self, how="quit"):
        if how == "quit":
            self.child.sendline("quit")
        else:
            self.child.sendeof()
        self._expect([r"ARGUS-EXIT=(\d+)"])
        code = int(self.child.match.group(1))
        self._expect([pexpect.EOF])
        text = self.text()
        assert "Traceback" not in text, text[-3000:]
        stty = ANSI.sub("", self.child.before)
        # sane: canonical mode and echo back on (prompt_toolkit restored the tty)
        assert re.search(r"(?<!-)icanon", stty) and re.search(r"(?<!-)echo\b", stty), stty
        return code


def sessions(db):
    con = sqlite3.connect(db)
    try:
        s = con.execute("SELECT id, pid, status, report FROM sessions ORDER BY id").fetchall()
        a = con.execute("SELECT session, kind, answer, source FROM answers ORDER BY session, seq").fetchall()
        r = con.execute("SELECT kind, key FROM rules ORDER BY id").fetchall()
        return s, a, r
    finally:
        con.close()


def debug_args(runner, info):
    return ["--buffer", runner.buffer, "--pid", str(info["app_pid"]), "--threshold", "1"]


def test_every_command_and_answers_replay(demos, tmp_path):
    runner, info = demos["run"]
    db = tmp_path / "sessions.db"
    r = Repl(runner, db, *debug_args(runner, info))
    r.answer_all()
    assert 1 <= len(r.questions) <= 3
    out = r.cmd("help")
    for name in ("vertex", "path", "stack", "events", "threads", "follow", "back", "not-causal", "flag",
                 "baseline", "diagnose", "export", "quit", "help"):
        assert name in out
        usage = r.cmd(f"help {name}")
        assert f"usage: {name}" in usage, usage
    assert "demo-helper" in r.cmd("path")
    v = r.cmd("vertex")
    assert "demo-app" in v and "read(fd" in v
    assert "demo-daemon" in r.cmd("threads")
    assert "vertex" in r.cmd("baseline 1")
    f = r.cmd("follow")
    assert "demo-daemon" in f, f
    assert "demo-app" in r.cmd("back")
    st = r.cmd("stack")                        # the app's wait: recorded user stacks
    assert re.search(r"^#0 +(?!0x)\S", st, re.M), st          # symbolized
    assert "switch_out" in r.cmd("events --limit 5")
    edge = re.search(r"^\s*1\s+(\d+)\s+wakeup", r.cmd("vertex " + str(json.loads(
        sqlite3.connect(str(db)).execute("SELECT report FROM sessions").fetchone()[0])["path"][2]["vertex"])),
        re.M)
    assert edge, "no incoming wakeup edge listed"
    assert "not causal" in r.cmd(f"not-causal {edge.group(1)}")
    assert "polls data flag 0x1234" in r.cmd("flag --addr 0x1234")
    answers, report = tmp_path / "answers.json", tmp_path / "report.json"
    assert "wrote" in r.cmd(f"export {answers} --answers")
    assert "wrote" in r.cmd(f"export {report}")
    assert r.finish("quit") == 0
    assert stat.S_IMODE(os.stat(answers).st_mode) == 0o600 and stat.S_IMODE(os.stat(db).st_mode) == 0o600
    ss, aa, rules = sessions(str(db))
    assert len(ss) == 1 and ss[0][1] == info["app_pid"] and ss[0][2] == "closed"
    assert [x[1] for x in aa if x[3] == "user"] == r.questions
    assert sorted(k for k, _ in rules) == ["data_flag", "not_causal"]
    # replay: --answers gives the interactive result
    interactive = json.loads(report.read_text())
    env = dict(runner.env, ARGUS_SESSION_DB=str(tmp_path / "other.db"))
    p = subprocess.run([sys.executable, "-m", "argus.cli", "debug", *debug_args(runner, info), "--answers",
                        str(answers), "--json"], env=env, capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr
    replay = json.loads(p.stdout)
    assert replay["path"] == interactive["path"] and replay["root_causes"] == interactive["root_causes"]
    assert replay["queries"] == interactive["queries"] and replay["metrics"]["mode"] == "replay"
    # --resume of the saved session: the same again
    p = subprocess.run([sys.executable, "-m", "argus.cli", "debug", "--resume", str(ss[0][0]), "--json"],
                       env=dict(runner.env, ARGUS_SESSION_DB=str(db)), capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr
    resumed = json.loads(p.stdout)
    # the same hang, the session's answers, and now also the session's rule:
    # the edge marked not causal is not followed any more
    assert resumed["spinning"]["vertex"] == interactive["spinning"]["vertex"]
    origins = [resumed["spinning"]["origin"]] + [c["origin"] for c in resumed["root_causes"]]
    assert any(o and o["kind"] == "not_causal" for o in origins), origins


@pytest.mark.parametrize("key", ["^C", "^D", "zzz"])
def test_interrupt_eof_nonsense_at_questions_and_prompt(demos, tmp_path, key):
    runner, info = demos["run"]
    db = tmp_path / "sessions.db"
    r = Repl(runner, db, *debug_args(runner, info))
    typed = []

    def answer(kind):                      # a typo is asked again: then Enter
        typed.append(key if key != "zzz" or len(typed) % 2 == 0 else "")
        return typed[-1]
    r.answer_all(answer)
    text = r.text()
    if key == "zzz":                       # invalid input: said, and the same question asked again
        assert len(r.questions) >= 2 and text.count("invalid input 'zzz'") == len(r.questions) // 2
        # numbered consecutively, the retry as attempt 2 of the same number
        assert r.numbers == [(k // 2 + 1, k % 2 + 1) for k in range(len(r.numbers))], r.numbers
        assert "interrupted" not in text
    else:                                  # the first stops the walk; the rest are not asked
        assert len(r.questions) == 1 and "interrupted" in text
    # nonsense and Ctrl-C at the command prompt: the REPL goes on
    assert "unknown command" in r.cmd("zzz")
    assert "follow:" in r.cmd("follow 99") or "no incoming" in r.cmd("follow 99")
    assert "invalid" in r.cmd("follow xx") or "follow:" in r.cmd("follow xx")
    assert "no vertex" in r.cmd("vertex 999999999")
    assert "cannot parse" in r.cmd('export "unterminated')
    r.child.sendintr()
    assert r._next() is None
    # a second diagnosis: its questions answered with the same key again
    typed.clear()
    r.cmd("diagnose", answer=answer)
    assert r.finish("eof") == 0
    ss, aa, _ = sessions(str(db))
    assert len(ss) == 1 and ss[0][2] == "closed" and ss[0][3]
    expected = {"^C": "aborted", "^D": "aborted", "zzz": "user"}[key]
    assert aa and aa[0][3] == expected


def _opened(pid, path):
    """Whether process pid has `path` open or mapped."""
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == path:
                    return True
            except OSError:
                pass
        with open(f"/proc/{pid}/maps") as f:
            return path in f.read()
    except OSError:
        return False


@pytest.fixture(scope="module")
def busy(tmp_path_factory):
    """A bigger recording (the demo's helper yielding for 8 s: millions of
    records) so that reading it takes long enough to be interrupted."""
    require_tracing()
    tmp = tmp_path_factory.mktemp("busy")
    runner = ArgusRunner(tmp)
    runner.env["ARGUS_SESSION_DB"] = str(tmp / "sessions-default.db")
    runner.start(size="1G")
    try:
        info, rc = run_demo("--requests", "3", "--hang-at", "1", "--hang-ms", "8000", "--interval-ms", "1",
                            "--stuck", "yield")
        assert rc == 0
        runner.wait_drained()
    finally:
        runner.stop()
    return runner, info


def test_ctrl_c_while_loading_exits_130(busy, tmp_path):
    """Ctrl-C while the buffer is being read (the moment argus has the trace
    file open or mapped, seen in /proc): exit 130, one line, no traceback.
    The buffer stays mapped after the load, so on a loaded machine the poll
    below can first see it open only once the load is over and the Ctrl-C
    reaches a prompt: such an attempt shows nothing and another is made."""
    import time
    runner, info = busy
    path = os.path.realpath(runner.buffer)
    for attempt in range(3):
        r = Repl(runner, tmp_path / f"sessions-{attempt}.db", *debug_args(runner, info))
        deadline = time.time() + 60
        pid = None
        kids = []
        while time.time() < deadline:
            kids = subprocess.run(["pgrep", "-P", str(r.child.pid)], capture_output=True, text=True).stdout.split()
            pid = next((int(k) for k in kids if _opened(int(k), path)), None)
            if pid:
                break
            time.sleep(0.002)
        assert pid, f"argus never opened {path} (children of {r.child.pid}: {kids})"
        r.child.sendintr()
        r._expect([r"ARGUS-EXIT=(\d+)", PROMPT, QUESTION])
        if r.child.match.re.pattern.startswith("ARGUS-EXIT"):
            break
        r.child.close(force=True)
    assert r.child.match.re.pattern.startswith("ARGUS-EXIT"), "the load finished before Ctrl-C arrived, 3 times"
    assert int(r.child.match.group(1)) == 130
    r._expect([pexpect.EOF])
    text = r.text()
    assert "Traceback" not in text and "argus: interrupted" in text, text[-2000:]


def test_not_causal_rule_applies_to_another_trace(demos, tmp_path):
    """Session 1 marks the edge the daemon's reply came from (helper ->
    daemon) "not causal"; session 2, on the other recording (other pids,
    same names), does not walk such an edge: its slices stop there with
    origin not_causal, and the report counts the questions the rule saved
    (the crafted tests in diagnose/chooser_test.py pin the counting)."""
    db = tmp_path / "sessions.db"
    runner, info = demos["run"]
    r = Repl(runner, db, *debug_args(runner, info))
    r.answer_all()
    report = tmp_path / "r1.json"
    r.cmd(f"export {report}")
    j1 = json.loads(report.read_text())
    helper_step = next(i for i, p in enumerate(j1["path"]) if p["tid"] == info["helper_tid"] and p["role"] == "slice")
    daemon_v = j1["path"][helper_step - 1]["vertex"]
    listing = r.cmd(f"vertex {daemon_v}")
    edge = re.search(r"^\s*\d+\s+(\d+)\s+wakeup.*demo-helper", listing, re.M)
    assert edge, listing
    assert "not causal" in r.cmd(f"not-causal {edge.group(1)}")
    assert r.finish() == 0
    _, _, rules = sessions(str(db))
    assert [k for k, _ in rules] == ["not_causal"]
    key = json.loads(rules[0][1])
    assert (key["src_thread"], key["dst_thread"], key["edge_type"]) == ("demo-helper", "demo-daemon", "wakeup")
    runner2, info2 = demos["sleep"]
    r = Repl(runner2, db, *debug_args(runner2, info2))
    r.answer_all()
    report = tmp_path / "r2.json"
    r.cmd(f"export {report}")
    text = r.text()
    assert "1 rule(s) from earlier sessions apply" in text
    assert r.finish() == 0
    j2 = json.loads(report.read_text())
    origins = [j2["spinning"]["origin"]] + [c["origin"] for c in j2["root_causes"]]
    assert any(o and o["kind"] == "not_causal" for o in origins), origins
    assert info2["helper_tid"] not in [p["tid"] for p in j2["path"] if p["role"] == "slice" and p["depth"] == 0]
    assert "saved_by_rules" in j2["metrics"]


def test_default_process_and_hangs_of_every_process(demos):
    """Without --pid: the first hang of the ranking (diagnose/candidates.py:
    event loops and windows first, then synchronous waits, each by latest
    end; the trace is system-wide: other programs may have hung after the
    demo app, so the check is against `argus hangs`, which says each hang's
    rank), and `argus hangs` lists the hangs of every process's main thread,
    the demo app's among them."""
    runner, info = demos["sleep"]
    p = runner.run("debug", "--buffer", runner.buffer, "--threshold", "1", "--json")
    assert "Traceback" not in p.stderr
    j = json.loads(p.stdout)
    hs = runner.json("hangs", "--buffer", runner.buffer, "--threshold", "1", "--top", "100000", "--json")["hangs"]
    assert any(h["pid"] == info["app_pid"] and h["block_type"] == "LongWait" for h in hs)
    assert all(h["main"] for h in hs)
    latest = max(hs, key=lambda h: (-h["candidate"]["tier"], h["end_ns"], h["dur_ns"]))
    assert (j["spinning"]["pid"], j["spinning"]["start_ns"], j["spinning"]["end_ns"]) == \
        (latest["pid"], latest["start_ns"], latest["end_ns"])
    # --at inside the demo app's hang picks it
    app = next(h for h in hs if h["pid"] == info["app_pid"] and h["block_type"] == "LongWait")
    at = (app["start_ns"] + app["end_ns"]) / 2 / 1e9 - json.loads(p.stdout)["trace"]["start_ns"] / 1e9
    j = runner.json("debug", "--buffer", runner.buffer, "--threshold", "1", "--pid", str(info["app_pid"]),
                    "--at", f"{at:.3f}", "--auto", "--json")
    assert j["spinning"]["start_ns"] == app["start_ns"]
    text = runner.run("hangs", "--buffer", runner.buffer, "--threshold", "1", "--top", "3").stdout
    header = text.splitlines()[0].split()    # a "where" column follows process when a scope is known
    assert header[0] == "process" and header[1 + (header[1] == "where")] == "thread" and len(text.splitlines()) <= 4
    bad = runner.run("hangs", "--buffer", runner.buffer, "--top", "0", check=False)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
