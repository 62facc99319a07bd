"""Files in shared directories (issue 16, items 1-3): root's Argus next to
paths another user controls.  Each attack of the audit is played by a second,
unprivileged user (tests/attacker.py); each must fail with one line, and
nothing outside Argus's own files may change (the targets of planted links
keep their content, mode and owner byte for byte).

  lldb-script  a <buffer>.lldb/ planted by the attacker (mode 777, or a
               symlink to a root directory), with a symlink at the script's
               name; a world-writable one; a script path (-o) whose name is a
               planted link; a buffer under a directory the attacker owns
               (the printed command must not be `python3 PATH`); results read
               back from a planted directory or through a symlink.
"""
import json
import os
import subprocess
import sys

import pytest

from attacker import as_attacker, attacker_ids, fingerprint, require_root, shared_dir, victim  # noqa: F401
from conftest import no_traceback


@pytest.fixture
def sleeper():
    p = subprocess.Popen(["sleep", "120"])
    yield p.pid
    p.kill()
    p.wait()


def _lldb_script(argus_cli, buffer, pid, *extra):
    return argus_cli.run("lldb-script", "--pid", str(pid), "--buffer", buffer, *extra, check=False)


def test_lldb_script_refuses_a_planted_results_dir(argus_cli, tmp_path, shared_dir, sleeper):
    require_root()
    buffer = os.path.join(shared_dir, "trace.argus")
    target = victim(tmp_path)
    before = fingerprint(target)
    rdir = buffer + ".lldb"

    def plant():
        os.mkdir(rdir, 0o777)
        os.symlink(target, os.path.join(rdir, f"trace_{sleeper}_{sleeper}.py"))
        os.symlink(target, os.path.join(rdir, f"{sleeper}-{sleeper}.json"))
    as_attacker(plant)
    proc = _lldb_script(argus_cli, buffer, sleeper)
    assert proc.returncode != 0
    line = no_traceback(proc)
    assert f"refusing directory {rdir}: it is owned by uid {attacker_ids()[0]}" in line, line
    assert fingerprint(target) == before


def test_lldb_script_refuses_a_symlinked_results_dir(argus_cli, tmp_path, shared_dir, sleeper):
    require_root()
    buffer = os.path.join(shared_dir, "trace.argus")
    root_dir = tmp_path / "root-only"
    root_dir.mkdir(mode=0o700)
    as_attacker(os.symlink, str(root_dir), buffer + ".lldb")
    proc = _lldb_script(argus_cli, buffer, sleeper)
    assert proc.returncode != 0
    assert "is a symbolic link" in no_traceback(proc)
    assert os.listdir(root_dir) == []


def test_lldb_script_refuses_a_world_writable_results_dir(argus_cli, shared_dir, sleeper):
    require_root()
    buffer = os.path.join(shared_dir, "trace.argus")
    os.mkdir(buffer + ".lldb")
    os.chmod(buffer + ".lldb", 0o777)          # root's own, but anyone could plant in it
    proc = _lldb_script(argus_cli, buffer, sleeper)
    assert proc.returncode != 0
    assert "is writable by other users (mode 0777)" in no_traceback(proc)
    assert os.listdir(buffer + ".lldb") == []


def test_lldb_script_output_replaces_a_planted_link(argus_cli, tmp_path, shared_dir, sleeper):
    """-o into /tmp-like: the link at that name is replaced by root's own 0600
    file, never followed."""
    require_root()
    buffer = os.path.join(shared_dir, "trace.argus")
    target = victim(tmp_path)
    before = fingerprint(target)
    out = os.path.join(shared_dir, "mine.py")
    as_attacker(os.symlink, target, out)
    _lldb_script(argus_cli, buffer, sleeper, "-o", out).check_returncode()
    st = os.lstat(out)
    assert not os.path.islink(out) and st.st_uid == 0 and st.st_mode & 0o777 == 0o600
    assert fingerprint(target) == before
    rst = os.stat(buffer + ".lldb")
    assert rst.st_uid == 0 and rst.st_mode & 0o777 == 0o700


def test_lldb_script_in_a_safe_dir_prints_the_path(argus_cli, shared_dir, sleeper):
    require_root()
    buffer = os.path.join(shared_dir, "trace.argus")
    for _ in range(2):                           # the second run replaces the first script
        proc = _lldb_script(argus_cli, buffer, sleeper)
        proc.check_returncode()
    script = os.path.join(buffer + ".lldb", f"trace_{sleeper}_{sleeper}.py")
    assert f"run it: python3 -I {script}" in proc.stdout
    assert os.stat(script).st_mode & 0o777 == 0o600
    assert sorted(os.listdir(buffer + ".lldb")) == [os.path.basename(script)]


def test_lldb_script_under_an_attackers_dir_prints_no_path(argus_cli, shared_dir, sleeper):
    """The attacker owns a directory on the path: they could swap the script
    directory after the write, so root is told to use --run, not a path."""
    require_root()
    theirs = os.path.join(shared_dir, "theirs")
    as_attacker(os.mkdir, theirs, 0o777)
    buffer = os.path.join(theirs, "trace.argus")
    proc = _lldb_script(argus_cli, buffer, sleeper)
    proc.check_returncode()
    assert "python3" not in proc.stdout and "run it with --run" in proc.stdout, proc.stdout


@pytest.fixture
def spinner():
    """A thread that computes (no sleep to step out of): the script ends at
    --max-steps at once."""
    p = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    yield p.pid
    p.kill()
    p.wait()


def _plant_modules(shared, marker):
    """The attacker's json.py and lldb.py beside where root's script will be:
    imported as root, they would write marker."""
    def plant():
        for mod in ("json", "lldb", "capstone"):
            with open(os.path.join(shared, f"{mod}.py"), "w") as f:
                f.write(f"import os\nopen({marker!r}, 'w').write(str(os.geteuid()))\n")
    as_attacker(plant)


def test_lldb_script_run_never_imports_a_module_planted_beside_it(argus_cli, tmp_path, shared_dir, spinner):
    """Issue 23 item 1: `-o SHARED/x.py --run` ran `python3 /dev/fd/N`, which
    put SHARED first on sys.path, so a planted json.py ran as root."""
    require_root()
    pytest.importorskip("lldb")
    buffer = str(tmp_path / "trace.argus")
    marker = str(tmp_path / "pwned")
    _plant_modules(shared_dir, marker)
    out = os.path.join(shared_dir, "x.py")
    proc = _lldb_script(argus_cli, buffer, spinner, "-o", out, "--run", "--max-steps", "5")
    assert not os.path.exists(marker), "a module planted beside the script was imported as root"
    assert "argus lldb trace:" in proc.stdout, (proc.stdout, proc.stderr)
    assert "python3" not in proc.stdout


def test_lldb_script_in_a_sticky_dir_prints_no_path(argus_cli, tmp_path, shared_dir, sleeper):
    """Running `python3 SHARED/x.py` later would import SHARED/json.py as root:
    a sticky directory is not private enough to offer the path."""
    require_root()
    buffer = str(tmp_path / "trace.argus")
    proc = _lldb_script(argus_cli, buffer, sleeper, "-o", os.path.join(shared_dir, "x.py"))
    proc.check_returncode()
    assert "python3" not in proc.stdout and "run it with --run" in proc.stdout, proc.stdout


def test_results_are_not_read_from_a_planted_dir(shared_dir, tmp_path):
    require_root()
    from argus.cli.safe_files import UnsafePath
    from argus.scripts.lldb import generate as gen
    buffer = os.path.join(shared_dir, "trace.argus")
    doc = json.dumps({"schema": gen.SCHEMA, "pid": 5, "tid": 5, "instructions": []})

    def plant():
        os.mkdir(buffer + ".lldb", 0o700)
        with open(os.path.join(buffer + ".lldb", "5-5.json"), "w") as f:
            f.write(doc)
    as_attacker(plant)
    with pytest.raises(UnsafePath, match="owned by uid"):
        gen.results_for(buffer, 5, 5)
    # root's own directory, but the result is a link to a file elsewhere
    other = os.path.join(str(tmp_path), "trace.argus")
    os.mkdir(other + ".lldb", 0o700)
    (tmp_path / "elsewhere.json").write_text(doc)
    os.symlink(str(tmp_path / "elsewhere.json"), other + ".lldb/5-5.json")
    with pytest.raises(UnsafePath, match="is a symbolic link"):
        gen.results_for(other, 5, 5)


def test_the_script_refuses_to_write_its_result_into_an_attackers_dir(tmp_path, shared_dir):
    require_root()
    pytest.importorskip("lldb")
    from argus.scripts.lldb import step_trace
    theirs = os.path.join(shared_dir, "theirs")
    as_attacker(os.mkdir, theirs, 0o755)
    with pytest.raises(RuntimeError, match="refusing to write"):
        step_trace.write_result(os.path.join(theirs, "1-1.json"), {"schema": "x"})
    assert os.listdir(theirs) == []
    mine = tmp_path / "r"
    step_trace.write_result(str(mine / "1-1.json"), {"schema": "x"})
    assert json.loads((mine / "1-1.json").read_text()) == {"schema": "x"}
    assert (mine / "1-1.json").stat().st_mode & 0o777 == 0o600


# --- item 2: a buffer file created beforehand by another user -------------------------------------------

def _start(argus_cli, buffer, size="64M"):
    return argus_cli.run("start", "--buffer", buffer, "--size", size, check=False)


def _assert_not_started(argus_cli, proc):
    assert proc.returncode != 0
    line = no_traceback(proc)
    assert argus_cli.run("status", "--json", "--buffer", "/nonexistent", check=False).returncode != 0
    return line


def test_start_refuses_a_buffer_another_user_created(argus_cli, shared_dir):
    """The attacker's empty 0666 file (they could keep a descriptor on it) is
    neither truncated nor chmod'ed nor used: start fails, the file is as it was."""
    from conftest import require_tracing
    require_tracing()
    buffer = os.path.join(shared_dir, "trace.argus")

    def plant():
        with open(buffer, "w"):
            pass
        os.chmod(buffer, 0o666)
    as_attacker(plant)
    before = fingerprint(buffer)
    line = _assert_not_started(argus_cli, _start(argus_cli, buffer))
    assert f"owned by uid {attacker_ids()[0]}" in line, line
    assert fingerprint(buffer) == before


def test_start_refuses_a_link_at_the_buffer_path(argus_cli, tmp_path, shared_dir):
    from conftest import require_tracing
    require_tracing()
    buffer = os.path.join(shared_dir, "trace.argus")
    target = victim(tmp_path)
    before = fingerprint(target)
    as_attacker(os.symlink, target, buffer)
    line = _assert_not_started(argus_cli, _start(argus_cli, buffer))
    assert "is a symbolic link" in line, line
    assert fingerprint(target) == before and os.path.islink(buffer)


def test_start_refuses_to_continue_a_world_readable_buffer(argus_cli, tmp_path):
    from conftest import require_tracing
    from argus.tracer import producer
    require_tracing()
    buffer = str(tmp_path / "trace.argus")
    producer.create_buffer(buffer, 64 << 20)
    os.chmod(buffer, 0o644)
    line = _assert_not_started(argus_cli, _start(argus_cli, buffer))
    assert "mode 0644 lets group or others open it" in line, line
    assert os.stat(buffer).st_mode & 0o777 == 0o644


def test_a_new_buffer_in_a_shared_dir_is_roots_and_private(argus_cli, shared_dir):
    from conftest import require_tracing
    require_tracing()
    buffer = os.path.join(shared_dir, "trace.argus")
    try:
        _start(argus_cli, buffer).check_returncode()
        st = os.lstat(buffer)
        assert st.st_uid == 0 and st.st_mode & 0o777 == 0o600
        assert sorted(os.listdir(shared_dir)) == ["trace.argus"]       # no temporary file left
    finally:
        argus_cli.stop()


def test_truncating_the_buffer_stops_the_daemon_with_a_log_line(argus_cli, tmp_path):
    """SIGBUS on the mapping: the daemon logs it and stops cleanly (socket
    removed) instead of dying silently.  Truncating needs the file's owner
    now (root): an attacker can no longer do it."""
    import time
    from conftest import require_tracing
    require_tracing()
    buffer = str(tmp_path / "trace.argus")
    _start(argus_cli, buffer).check_returncode()
    pid = argus_cli.status()["pid"]
    os.truncate(buffer, 0)
    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        subprocess.run(["true"])                 # events: the daemon writes, and faults
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}"), "argusd still runs after its buffer was truncated"
    log = (tmp_path / "run" / "argusd.log").read_text()
    assert "was truncated under the daemon (SIGBUS at offset" in log, log[-2000:]
    assert not os.path.exists(tmp_path / "run" / "argusd.sock")


# --- item 3: a run / state directory prepared by another user ---------------------------------------------

def _plant_run_dir(path, targets):
    """The attacker's run directory, with links where Argus writes."""
    def plant():
        os.mkdir(path, 0o755)
        os.symlink(targets[0], os.path.join(path, "state.json"))
        os.symlink(targets[1], os.path.join(path, "argusd.log"))
    as_attacker(plant)


def test_start_refuses_a_run_dir_another_user_made(argus_cli, tmp_path, shared_dir):
    from conftest import require_tracing
    require_tracing()
    targets = [victim(tmp_path, "a.conf"), victim(tmp_path, "b.conf")]
    before = [fingerprint(t) for t in targets]
    run = os.path.join(shared_dir, "run")
    _plant_run_dir(run, targets)
    argus_cli.env["ARGUS_RUN_DIR"] = run
    for args in (("start", "--buffer", argus_cli.buffer, "--size", "64M"), ("status",), ("stop",)):
        proc = argus_cli.run(*args, check=False)
        assert proc.returncode != 0, args
        assert f"refusing directory {run}: it is owned by uid {attacker_ids()[0]}" in no_traceback(proc)
    assert [fingerprint(t) for t in targets] == before
    assert not os.path.exists(argus_cli.buffer)


def test_start_refuses_a_run_dir_others_can_write(argus_cli, tmp_path):
    from conftest import require_tracing
    require_tracing()
    run = tmp_path / "run"
    run.mkdir()
    os.chmod(run, 0o777)
    proc = argus_cli.run("start", "--buffer", argus_cli.buffer, "--size", "64M", check=False)
    assert proc.returncode != 0
    assert "is writable by other users (mode 0777)" in no_traceback(proc)
    assert os.listdir(run) == []


def test_files_in_the_run_dir_are_never_followed(argus_cli, tmp_path):
    """Root's own run directory, but with a link at the log's name (left by an
    earlier compromise, say): refused, the link's target untouched."""
    from conftest import require_tracing
    require_tracing()
    target = victim(tmp_path)
    before = fingerprint(target)
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    os.symlink(target, run / "argusd.log")
    proc = argus_cli.run("start", "--buffer", argus_cli.buffer, "--size", "64M", check=False)
    assert proc.returncode != 0
    assert f"refusing file {run / 'argusd.log'}: it is a symbolic link" in no_traceback(proc)
    assert fingerprint(target) == before


def test_start_refuses_a_state_dir_another_user_made(argus_cli, shared_dir):
    """The default buffer lives in ARGUS_STATE_DIR: the attacker's directory
    would let them replace it after root creates it."""
    from conftest import require_tracing
    require_tracing()
    state = os.path.join(shared_dir, "state")
    as_attacker(os.mkdir, state, 0o755)
    argus_cli.env["ARGUS_STATE_DIR"] = state
    proc = argus_cli.run("start", "--size", "64M", check=False)
    assert proc.returncode != 0
    assert f"is owned by uid {attacker_ids()[0]} (not root or you): refused" in no_traceback(proc)
    assert os.listdir(state) == []


def test_session_store_in_another_users_dir_is_refused(tmp_path, shared_dir):
    require_root()
    from argus.cli.session import SessionError, Store
    target = victim(tmp_path)
    before = fingerprint(target)
    theirs = os.path.join(shared_dir, "theirs")

    def plant():
        os.mkdir(theirs, 0o755)
        os.symlink(target, os.path.join(theirs, "sessions.db"))
    as_attacker(plant)
    with pytest.raises(SessionError, match=f"refusing directory {theirs}: it is owned by uid"):
        Store(os.path.join(theirs, "sessions.db"))
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    os.symlink(target, mine / "sessions.db")
    with pytest.raises(SessionError, match="is a symbolic link"):
        Store(str(mine / "sessions.db"))
    assert fingerprint(target) == before


# ---- tracepoint rings (issue 23): a hostile ring file never takes argusd down

def _ring_log_lines(argus_cli, name):
    with open(os.path.join(argus_cli.env["ARGUS_RUN_DIR"], "argusd.log"), errors="replace") as f:
        return [line for line in f if name in line]


def _wait_for(cond, seconds=10.0):
    import time
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = cond()
        if found:
            return found
        time.sleep(0.05)
    return None


def test_truncated_ring_is_dropped_and_argusd_goes_on(argus_cli):
    """The ring directory is argusd's (0700), so its files are written by the
    traced programs themselves: one that truncates its ring (a bug, or a
    hostile program) used to kill argusd with SIGBUS, no log line, a stale
    socket.  Now that ring goes with one log line and tracing goes on."""
    from conftest import native, require_tracing
    require_tracing()
    argus_cli.start(size="64M")
    daemon = argus_cli.status()["pid"]
    rings = os.path.join(argus_cli.env["ARGUS_RUN_DIR"], "urings")
    prog = subprocess.Popen([sys.executable, "-m", "argus.cli", "run", "--", native("argus-mutex-holder"),
                             "sleep", "0.5", "5"], env=argus_cli.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        ids = json.loads(prog.stdout.readline())
        name = f"{ids['pid']}-{ids['tid']}.ring"      # the main thread locks every 20 ms
        assert _wait_for(lambda: os.path.exists(os.path.join(rings, name))), os.listdir(rings)
        import time
        time.sleep(0.5)                               # argusd has mapped it and drains it
        os.truncate(os.path.join(rings, name), 4096)
        assert _wait_for(lambda: _ring_log_lines(argus_cli, name)), "no log line about the ring"
        time.sleep(0.5)
        os.kill(daemon, 0)                            # still alive
        status = argus_cli.status()
        assert status["tracing"] and status["pid"] == daemon
        lines = _ring_log_lines(argus_cli, name)
        assert len(lines) == 1 and "dropped tracepoint ring" in lines[0], lines
    finally:
        prog.kill()
        prog.wait()


def _ring_file(path, pid, tid, data_size=4096):
    """A well-formed, empty ring (dylib-instrument/uring.h) claiming pid/tid."""
    import struct
    header = struct.pack("<QIIIIQIII", 0x3152555355475241, 1, 4096, pid, tid, data_size,
                         1, 0, 0)                     # CLOCK_MONOTONIC, open, attached
    with open(path, "wb") as f:
        f.write(header.ljust(4096 + data_size, b"\0"))


def test_ring_claiming_another_process_is_refused(argus_cli):
    """`1-1.ring` used to credit its records to init: the name and the header
    are the creator's word only.  pid 1 does not map that file: refused."""
    from conftest import require_tracing
    require_tracing()
    argus_cli.start(size="64M")
    daemon = argus_cli.status()["pid"]
    path = os.path.join(argus_cli.env["ARGUS_RUN_DIR"], "urings", "1-1.ring")
    _ring_file(path, 1, 1)
    assert _wait_for(lambda: _ring_log_lines(argus_cli, "1-1.ring")), "no log line about 1-1.ring"
    lines = _ring_log_lines(argus_cli, "1-1.ring")
    assert len(lines) == 1 and "refused tracepoint ring 1-1.ring" in lines[0], lines
    assert not os.path.exists(path)
    os.kill(daemon, 0)
    assert argus_cli.status()["tracing"]
