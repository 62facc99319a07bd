"""Never lose a trace, and always say which one is read (issue 15, items 1-2).

Real daemons in a private run/state dir (conftest.ArgusRunner):
  - `argus start --buffer EXISTING --size OTHER` refuses in one line, exits
    non-zero and leaves the file byte-identical; without --size the existing
    buffer is continued (appended to); --force re-creates it.
  - after `argus stop`, status / events / hangs without --buffer read the
    buffer just used (remembered 0600 in ARGUS_STATE_DIR) and say so on stderr.
"""
import hashlib
import os
import stat

from conftest import no_traceback, require_tracing


def sha(path):
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def test_existing_buffer_is_never_recreated_silently(argus_cli):
    require_tracing()
    argus_cli.start(size="16M")
    argus_cli.wait_drained(0.5)
    argus_cli.stop()
    before = sha(argus_cli.buffer)
    events = argus_cli.json("status", "--json", "--buffer", argus_cli.buffer)["events"]
    assert events > 0

    proc = argus_cli.run("start", "--buffer", argus_cli.buffer, "--size", "32M", check=False)
    assert proc.returncode != 0
    line = no_traceback(proc)
    assert "exists and holds a trace" in line and "--force" in line, line
    assert sha(argus_cli.buffer) == before
    assert not argus_cli.json("status", "--json", "--buffer", argus_cli.buffer)["tracing"]

    # no --size: the existing buffer is continued, its trace kept
    out = argus_cli.run("start", "--buffer", argus_cli.buffer).stdout
    assert "appending" in out, out
    argus_cli.wait_drained(0.5)
    argus_cli.stop()
    st = argus_cli.json("status", "--json", "--buffer", argus_cli.buffer)
    assert st["events"] > events and os.path.getsize(argus_cli.buffer) == 16 << 20

    argus_cli.run("start", "--buffer", argus_cli.buffer, "--size", "32M", "--force")
    argus_cli.stop()
    assert os.path.getsize(argus_cli.buffer) == 32 << 20

    # not an Argus buffer: refused even with --force
    other = argus_cli.tmp / "precious.txt"
    other.write_text("keep me\n")
    proc = argus_cli.run("start", "--buffer", str(other), "--size", "16M", "--force", check=False)
    assert proc.returncode != 0 and "not an Argus buffer" in no_traceback(proc)
    assert other.read_text() == "keep me\n"


def test_readers_default_to_the_last_buffer(argus_cli):
    require_tracing()
    argus_cli.buffer = str(argus_cli.tmp / "elsewhere.argus")   # not the default path
    argus_cli.start(size="16M")
    argus_cli.wait_drained(0.5)
    argus_cli.stop()

    remembered = os.path.join(argus_cli.env["ARGUS_STATE_DIR"], "last-buffer.json")
    assert stat.S_IMODE(os.stat(remembered).st_mode) == 0o600

    proc = argus_cli.run("status", "--json")
    assert argus_cli.buffer in proc.stderr and "last buffer" in proc.stderr
    import json
    assert json.loads(proc.stdout)["buffer"] == argus_cli.buffer
    proc = argus_cli.run("events", "--limit", "3")
    assert argus_cli.buffer in proc.stderr and len(proc.stdout.splitlines()) == 3
    proc = argus_cli.run("hangs", "--all", check=False)
    assert argus_cli.buffer in proc.stderr and "no trace at" not in proc.stderr

    # a symlink planted where the record lives is never followed
    os.unlink(remembered)
    target = argus_cli.tmp / "target"
    target.write_text("x")
    os.symlink(target, remembered)
    argus_cli.start(size="16M")
    argus_cli.stop()
    assert target.read_text() == "x"
