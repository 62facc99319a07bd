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
  writers      (issue 23) the REPL's `export FILE` / `export FILE --answers`
               at a planted link, at a 0666 file the attacker made and holds
               open, into the attacker's directory; `argus instrument -o`
               while the attacker's inotify watch swaps every new file for a
               link to a root file.
"""
import json
import os
import stat
import subprocess
import sys

import pytest

from attacker import as_attacker, attacker_ids, fingerprint, require_root, shared_dir, victim  # noqa: F401
from conftest import no_traceback
from support.polling import wait_until
from support.programs import program
from test_instrument import built  # noqa: F401  (a small ELF library built here)


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
    from argus.tracer.safe_files import UnsafePath
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
    assert f"refusing directory {state}: it is owned by uid {attacker_ids()[0]} (not root or you)" in no_traceback(proc)
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


def test_truncated_ring_is_dropped_and_argusd_goes_on(argus_cli):
    """The ring directory is argusd's (0700), so its files are written by the
    traced programs themselves: one that truncates its ring (a bug, or a
    hostile program) used to kill argusd with SIGBUS, no log line, a stale
    socket.  Now that ring goes with one log line and tracing goes on."""
    from conftest import require_tracing
    require_tracing()
    argus_cli.start(size="64M")
    daemon = argus_cli.status()["pid"]
    rings = os.path.join(argus_cli.env["ARGUS_RUN_DIR"], "urings")
    prog = subprocess.Popen([sys.executable, "-m", "argus.cli", "run", "--", program("argus-mutex-holder"),
                             "sleep", "0.5", "5"], env=argus_cli.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        ids = json.loads(prog.stdout.readline())
        name = f"{ids['pid']}-{ids['tid']}.ring"      # the main thread locks every 20 ms
        assert wait_until(lambda: os.path.exists(os.path.join(rings, name))), os.listdir(rings)
        import time
        time.sleep(0.5)                               # argusd has mapped it and drains it
        os.truncate(os.path.join(rings, name), 4096)
        assert wait_until(lambda: _ring_log_lines(argus_cli, name)), "no log line about the ring"
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
    assert wait_until(lambda: _ring_log_lines(argus_cli, "1-1.ring")), "no log line about 1-1.ring"
    lines = _ring_log_lines(argus_cli, "1-1.ring")
    assert len(lines) == 1 and "refused tracepoint ring 1-1.ring" in lines[0], lines
    assert not os.path.exists(path)
    os.kill(daemon, 0)
    assert argus_cli.status()["tracing"]


# -- every file Argus creates as root goes through one writer (issue 23, items 2 and 3)

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "golden.argus")


def _repl_on_golden(tmp_path):
    """`argus debug` in a pty (test_repl.Repl) on the recorded golden trace, at the command prompt."""
    import types
    pytest.importorskip("pexpect")
    from test_repl import Repl
    env = dict(os.environ, ARGUS_RUN_DIR=str(tmp_path / "run"), ARGUS_STATE_DIR=str(tmp_path / "state"))
    r = Repl(types.SimpleNamespace(env=env), tmp_path / "sessions.db", "--buffer", GOLDEN, "--pid", "11628",
             "--threshold", "0.03", "--at", "0.05")
    r.answer_all()
    return r


EXPORTS = {"report": "", "answers": " --answers"}


def _assert_roots_new_file(path, kind):
    st = os.lstat(path)
    assert not os.path.islink(path) and st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o600, st
    with open(path) as f:
        doc = json.load(f)
    assert doc["schema"] == {"answers": "argus.answers/1", "report": "argus.diagnosis/1"}[kind], doc


def test_repl_export_replaces_a_planted_link(tmp_path, shared_dir):
    """`export FILE` and `export FILE --answers` opened FILE with O_CREAT |
    O_TRUNC: a link planted at the name made root overwrite its target.  Now
    the link is replaced by root's own 0600 file; into a directory the
    attacker owns, the export is refused with one line."""
    require_root()
    target = victim(tmp_path)
    os.chmod(target, 0o600)
    before = fingerprint(target)
    theirs = os.path.join(shared_dir, "theirs")

    def plant():
        os.mkdir(theirs, 0o777)
        for kind in EXPORTS:
            os.symlink(target, os.path.join(shared_dir, f"{kind}.json"))
            os.symlink(target, os.path.join(theirs, f"{kind}.json"))
    as_attacker(plant)
    r = _repl_on_golden(tmp_path)
    for kind, flag in EXPORTS.items():
        out = os.path.join(shared_dir, f"{kind}.json")
        assert "wrote" in r.cmd(f"export {out}{flag}")
        _assert_roots_new_file(out, kind)
        refused = [l for l in r.cmd(f"export {os.path.join(theirs, kind + '.json')}{flag}").splitlines()
                   if l.strip() and "(argus:" not in l]
        assert len(refused) == 1 and refused[0].startswith(f"export: refusing directory {theirs}: it is owned by "
                                                           f"uid {attacker_ids()[0]}"), refused
    assert r.finish() == 0
    assert fingerprint(target) == before
    assert sorted(os.listdir(shared_dir)) == ["answers.json", "report.json", "theirs"]   # no temporary file left


def test_repl_export_never_writes_into_a_file_the_attacker_made(tmp_path, shared_dir):
    """A 0666 file the attacker created at FILE (and can keep open) was
    truncated and written through: the attacker read root's report.  Now the
    name gets a new root-owned 0600 file; the attacker's inode keeps its
    content."""
    require_root()
    planted = {kind: os.path.join(shared_dir, f"{kind}.json") for kind in EXPORTS}

    def plant():
        for path in planted.values():
            with open(path, "w") as f:
                f.write("the attacker's\n")
            os.chmod(path, 0o666)
    as_attacker(plant)
    # the attacker's descriptor: what it reads after the export is what its inode holds
    held = {kind: os.open(path, os.O_RDONLY) for kind, path in planted.items()}
    try:
        r = _repl_on_golden(tmp_path)
        for kind, flag in EXPORTS.items():
            assert "wrote" in r.cmd(f"export {planted[kind]}{flag}")
        assert r.finish() == 0
        for kind, path in planted.items():
            _assert_roots_new_file(path, kind)
            st = os.fstat(held[kind])
            assert st.st_ino != os.stat(path).st_ino and st.st_uid == attacker_ids()[0]
            assert os.pread(held[kind], 4096, 0) == b"the attacker's\n"
    finally:
        for fd in held.values():
            os.close(fd)


def _swap_new_files_for_links(watched, target, ready_fd):
    """The attacker: inotify on watched; every file created there is replaced
    (atomically: a link under another name renamed over it) by a symlink to
    target, until killed."""
    import ctypes
    import struct
    libc = ctypes.CDLL(None, use_errno=True)
    IN_CREATE = 0x100
    fd = libc.inotify_init1(0)
    if fd < 0 or libc.inotify_add_watch(fd, watched.encode(), IN_CREATE) < 0:
        raise OSError(ctypes.get_errno(), "inotify")
    os.write(ready_fd, b"1")
    while True:
        buf = os.read(fd, 65536)
        off = 0
        while off < len(buf):
            _, mask, _, n = struct.unpack_from("iIII", buf, off)
            name = buf[off + 16:off + 16 + n].rstrip(b"\0").decode()
            off += 16 + n
            if name.startswith(".lnk-"):
                continue
            try:
                os.symlink(target, os.path.join(watched, ".lnk-" + name))
                os.rename(os.path.join(watched, ".lnk-" + name), os.path.join(watched, name))
            except OSError:
                pass                   # a sticky directory: not the attacker's entry to replace


def _instrument_with_a_racing_attacker(argus_cli, lib_dir, out, watched, target):
    import ctypes  # noqa: F401  (loaded here: root's Python installation may be unreadable to the attacker)
    import signal
    import struct  # noqa: F401
    from attacker import spawn_as_attacker
    spec = lib_dir / "one-hook.json"
    spec.write_text(json.dumps({"library": "libargustest.so", "hooks": [{"symbol": "work", "enter": "callback_begin"}]}))
    ready_r, ready_w = os.pipe()
    pid = spawn_as_attacker(_swap_new_files_for_links, watched, target, ready_w)
    try:
        os.close(ready_w)
        assert os.read(ready_r, 1) == b"1", "the attacker's inotify watch did not start"
        return argus_cli.run("instrument", str(lib_dir / "libargustest.so"), "-o", out, "--hooks", str(spec),
                             check=False)
    finally:
        os.close(ready_r)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def test_instrument_output_survives_an_inotify_swap(argus_cli, built, tmp_path, shared_dir):
    """`argus instrument -o OUT` made a temporary file beside OUT, then LIEF
    wrote it by path, chmod'ed it and renamed it.  In a directory the attacker
    owns, an inotify watch swapped the new temporary file for a link to a root
    file, which became the instrumented library (and 0750).  Now such a
    directory is refused with one line; in a sticky /tmp-like one (others
    cannot replace root's entries there) the library is written, the watch
    changes nothing."""
    require_root()
    target = victim(tmp_path)
    os.chmod(target, 0o600)
    before = fingerprint(target)
    theirs = os.path.join(shared_dir, "build")
    as_attacker(os.mkdir, theirs, 0o777)
    proc = _instrument_with_a_racing_attacker(argus_cli, built, os.path.join(theirs, "libargustest.so"), theirs,
                                              target)
    assert fingerprint(target) == before, "root's file became the instrumented library"
    assert proc.returncode != 0
    line = no_traceback(proc)
    assert f"refusing directory {theirs}: it is owned by uid {attacker_ids()[0]}" in line, line

    out = os.path.join(shared_dir, "libargustest.so")
    proc = _instrument_with_a_racing_attacker(argus_cli, built, out, shared_dir, target)
    assert proc.returncode == 0, proc.stderr
    st = os.lstat(out)
    assert not os.path.islink(out) and st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o750
    with open(out, "rb") as f:
        assert f.read(4) == b"\x7fELF"
    assert fingerprint(target) == before
    # no temporary file of root's is left (a link the attacker made after root's rename may be)
    assert [n for n in os.listdir(shared_dir) if os.lstat(os.path.join(shared_dir, n)).st_uid == 0] == [
        "libargustest.so"]


# --- issue 23 item 4: the state directory ---------------------------------------------------------------

def _swap_loop(a, b, stop_file, seconds):
    """The attacker's loop: renameat2(a, b, RENAME_EXCHANGE) until stop_file
    appears; asserts it swapped at all."""
    import ctypes
    import time
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = libc.renameat2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    swaps, deadline = 0, time.monotonic() + seconds
    while not os.path.exists(stop_file) and time.monotonic() < deadline:
        swaps += renameat2(at_fdcwd, a.encode(), at_fdcwd, b.encode(), rename_exchange) == 0
    assert swaps > 0, f"renameat2: {os.strerror(ctypes.get_errno())}"


def _in_background(fn, *args):
    """as_attacker(fn, *args) in a child of its own: its pid, to wait for."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            as_attacker(fn, *args)
            code = 0
        finally:
            os._exit(code)
    return pid


def _listing(top):
    """{relative path: fingerprint} of every file under top."""
    out = {}
    for d, _, files in os.walk(top):
        for n in files:
            p = os.path.join(d, n)
            out[os.path.relpath(p, top)] = fingerprint(p)
    return out


def test_state_dir_exchanged_under_the_snapshot_writer(argus_cli, tmp_path, shared_dir):
    """Issue 23 item 4: the attacker can rename entries of the directory that
    holds the state directory; a loop swaps the state directory with a link
    to a root directory (renameat2 RENAME_EXCHANGE) while a snapshot is
    written and pruned.  Writing, renaming and pruning through the path made
    root write snapshots there and delete its *.argus / *.json files; through
    the directory fd opened at start, nothing there changes."""
    from conftest import require_tracing, run_demo
    require_tracing()
    import time
    other = tmp_path / "other"
    (other / "snapshots").mkdir(parents=True, mode=0o700)
    for name in ("0000-precious.argus", "0000-precious.json"):
        (other / "snapshots" / name).write_bytes(b"root's, not a snapshot\n")
        os.chmod(other / "snapshots" / name, 0o640)
    before = _listing(other)
    theirs = os.path.join(shared_dir, "theirs")
    state, decoy = os.path.join(theirs, "state"), os.path.join(theirs, "decoy")

    def plant():
        os.mkdir(theirs, 0o755)
        os.symlink(str(other), decoy)
    as_attacker(plant)
    argus_cli.env["ARGUS_STATE_DIR"] = state
    argus_cli.run("start", "--buffer", argus_cli.buffer, "--size", "64M", "--snapshot-max-count", "1")
    import ctypes  # noqa: F401  (loaded now, as root: the attacker cannot read root's Python tree)
    stop = str(tmp_path / "stop")
    os.chmod(tmp_path, 0o755)           # the attacker's loop looks for the stop file
    loop = _in_background(_swap_loop, state, decoy, stop, 60)
    try:
        info, rc = run_demo("--requests", "20", "--hang-at", "10", "--hang-ms", "2500", "--interval-ms", "20",
                            "--stuck", "sleep")
        assert rc == 0
        log = tmp_path / "run" / "argusd.log"
        deadline = time.monotonic() + 30
        while not any(w in log.read_text() for w in (" written (", "failed to write snapshot")):
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.2)
        time.sleep(1)
    finally:
        open(stop, "w").close()
        _, status = os.waitpid(loop, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the attacker's swap loop failed"
    assert _listing(other) == before, "root wrote into, or pruned, the directory swapped in"
    real = state if not os.path.islink(state) else decoy      # where the state directory is now
    snaps = sorted(os.listdir(os.path.join(real, "snapshots")))
    assert [n for n in snaps if n.endswith(".argus")] and "index" in snaps, (snaps, log.read_text()[-2000:])
    assert not [n for n in snaps if n.endswith(".tmp")]


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o770])
def test_start_refuses_a_state_dir_others_can_write(argus_cli, tmp_path, mode):
    """Others could swap the snapshot directory inside it: refused with one
    line (it only warned that the last buffer could not be remembered)."""
    from conftest import require_tracing
    require_tracing()
    state = tmp_path / "state"
    state.mkdir()
    os.chmod(state, mode)
    proc = argus_cli.run("start", "--buffer", argus_cli.buffer, "--size", "64M", check=False)
    assert proc.returncode != 0
    line = no_traceback(proc)
    assert f"refusing directory {state}: it is writable by other users (mode {mode:04o})" in line, line
    assert os.listdir(state) == [] and not os.path.exists(argus_cli.buffer)
    assert argus_cli.run("status", "--json", "--buffer", "/nonexistent", check=False).returncode != 0


def test_argusd_refuses_a_state_dir_others_can_write(tmp_path):
    """The daemon checks it too (argusd run by hand, or by another front)."""
    from conftest import native, require_tracing
    require_tracing()
    run, state = tmp_path / "run", tmp_path / "state"
    run.mkdir(mode=0o700)
    state.mkdir()
    os.chmod(state, 0o777)
    try:
        proc = subprocess.run([native("argusd"), "--foreground", "--buffer", str(tmp_path / "trace.argus"),
                               "--size", str(64 << 20), "--socket", str(run / "argusd.sock"), "--log",
                               str(run / "argusd.log"), "--snapshot-dir", str(state / "snapshots")],
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("argusd traced with a state directory others can write")
    assert proc.returncode != 0
    assert f"refusing directory {state}: it is writable by other users (mode 0777)" in proc.stderr, proc.stderr
    assert os.listdir(state) == []


def test_idle_control_clients_do_not_lock_control_out(argus_cli):
    """Nine clients that connect and never send (a hung `argus status`, or
    anyone with the socket) used to fill the 8 slots and turn every other
    client away as busy until they timed out (5 s)."""
    import socket
    from conftest import require_tracing
    require_tracing()
    argus_cli.start(size="64M")
    sock = os.path.join(argus_cli.env["ARGUS_RUN_DIR"], "argusd.sock")
    idle = []
    try:
        for _ in range(9):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sock)
            idle.append(s)
        status = argus_cli.status()                  # while all nine are still connected
        assert status["tracing"]
    finally:
        for s in idle:
            s.close()
