"""A FIFO or another non-regular file as the buffer (issue 16, item 6).

Every open of a trace used to come before the regular-file check, so a FIFO
blocked `argus events`, `status`, `debug` and `import-kdebug` forever.  Now
each exits non-zero with one line, at once (the subprocess timeout here only
turns a hang into a failure; nothing is asserted on time: the elapsed times
go to the report).
"""
import os
import subprocess
import sys
import time

import pytest

from conftest import no_traceback

COMMANDS = {
    "events": lambda f, tmp: ["events", "--buffer", f],
    "status": lambda f, tmp: ["status", "--buffer", f],
    "debug": lambda f, tmp: ["debug", "--buffer", f, "--pid", "1", "--auto"],
    "hangs": lambda f, tmp: ["hangs", "--buffer", f],
    "import-kdebug": lambda f, tmp: ["import-kdebug", f, "--out", str(tmp / "out.argus")],
    "import-kdebug --out": lambda f, tmp: ["import-kdebug", _kdebug_file(tmp), "--out", f],
}


def _kdebug_file(tmp):
    """A valid kdebug trace, so only the FIFO --out is wrong."""
    from support import kdebug_gen
    path = tmp / "small.trace"
    if not path.exists():
        trace, _ = kdebug_gen.cross_process_hang(n_baseline=1, hang_s=0.1)
        trace.write_v3(path)
    return str(path)


@pytest.fixture(params=["fifo", "chardev"])
def special(request, tmp_path):
    if request.param == "fifo":
        path = tmp_path / "trace.argus"
        os.mkfifo(path)
        return str(path)
    return "/dev/null"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_non_regular_buffer_is_refused_at_once(argus_cli, tmp_path, special, command):
    args = COMMANDS[command](special, tmp_path)
    t0 = time.monotonic()
    proc = argus_cli.run(*args, check=False, timeout=30)
    elapsed = time.monotonic() - t0
    assert proc.returncode != 0
    line = no_traceback(proc)
    assert "not a regular file" in line, line
    print(f"{command} {special}: exit {proc.returncode} after {elapsed:.2f} s")
