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
    assert f"run it: python3 {script}" in proc.stdout
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


def test_results_are_not_read_from_a_planted_dir(shared_dir, tmp_path):
    require_root()
    from argus.cli.safe_files import UnsafePath
    from argus.lldb import generate as gen
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
    from argus.lldb import step_trace
    theirs = os.path.join(shared_dir, "theirs")
    as_attacker(os.mkdir, theirs, 0o755)
    with pytest.raises(RuntimeError, match="refusing to write"):
        step_trace.write_result(os.path.join(theirs, "1-1.json"), {"schema": "x"})
    assert os.listdir(theirs) == []
    mine = tmp_path / "r"
    step_trace.write_result(str(mine / "1-1.json"), {"schema": "x"})
    assert json.loads((mine / "1-1.json").read_text()) == {"schema": "x"}
    assert (mine / "1-1.json").stat().st_mode & 0o777 == 0o600
