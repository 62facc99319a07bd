"""`argus status` names what the tracer dropped (lost) and the switches the
kernel never reported (switches_unreported) apart: from a real buffer's
header with no daemon (a private run directory), and in its text form."""
import ctypes
import json
import os
import subprocess
import sys

from argus.cli import cmd_status
from argus.tracer import native, producer


def _buffer(path, lost, unreported):
    producer.create_buffer(path, 1 << 20, 4096)
    lib, handle = native.lib(), ctypes.c_void_p()
    assert lib.argus_rb_open(native.fs_path(path), 1, ctypes.byref(handle)) == 0
    try:
        lib.argus_rb_add_lost(handle, lost)
        lib.argus_rb_add_switches_unreported(handle, unreported)
    finally:
        lib.argus_rb_close(handle)


def _status(tmp_path, buf, *extra):
    env = dict(os.environ, ARGUS_RUN_DIR=str(tmp_path / "run"), ARGUS_STATE_DIR=str(tmp_path / "state"))
    proc = subprocess.run([sys.executable, "-m", "argus.cli", "status", "--buffer", buf, *extra],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_a_buffer_without_a_daemon_reports_lost_and_unreported_apart(tmp_path):
    buf = str(tmp_path / "trace.argus")
    _buffer(buf, 3, 1234)
    info = json.loads(_status(tmp_path, buf, "--json"))
    assert (info["tracing"], info["lost"], info["switches_unreported"]) == (False, 3, 1234)
    text = _status(tmp_path, buf).splitlines()
    assert "lost:           3 (records the tracer dropped)" in text
    assert "unreported:     1,234 switches the kernel never reported (holes in its tracing, not drops)" in text


def test_a_daemon_reply_without_the_count_prints_no_unreported_line():
    live = {"tracing": True, "pid": 7, "buffer": "/b", "lost": 0, "switches_unreported": 5}
    assert "unreported:     5 switches the kernel never reported (holes in its tracing, not drops)" in \
        cmd_status.format_text(live)
    del live["switches_unreported"]     # an argusd older than the count
    lines = cmd_status.format_text(live)
    assert "lost:           0 (records the tracer dropped)" in lines
    assert not any(line.startswith("unreported:") for line in lines)
