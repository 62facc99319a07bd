"""`argus run -- CMD` end to end: a real daemon, the LD_PRELOAD agent in a
real program, hooks from the shipped hook spec, per-thread rings drained into
the trace file.

The probe record types are not in the decoder's schema yet
(dylib-instrument/probe_record.h), so the trace counts them as well-formed
records of unknown type: that count is what these tests check."""
import os
import subprocess
import sys

from conftest import native, require_tracing

from argus.tracer import reader

GLIB_SCRIPT = """
import ctypes
g = ctypes.CDLL('libglib-2.0.so.0')     # dlopen, RTLD_LOCAL: hooks go in after it
g.g_main_context_wakeup(None)
for _ in range(50):
    g.g_main_context_iteration(None, 0)
"""


def _run(argus_cli, *cmd):
    return subprocess.run([sys.executable, "-m", "argus.cli", "run", "--verbose", "--", *cmd],
                          env=argus_cli.env, capture_output=True, text=True, timeout=120)


def _probe_records(argus_cli):
    argus_cli.wait_drained()
    argus_cli.stop()
    return reader.decode_file(argus_cli.buffer).unknown_records


def test_run_without_daemon_is_one_line(argus_cli):
    proc = _run(argus_cli, "true")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "argus start" in proc.stderr


def test_mutex_hooks_in_a_real_program(argus_cli):
    require_tracing()
    argus_cli.start(size="64M")
    proc = _run(argus_cli, native("argus-mutex-holder"), "sleep", "0.3", "0.3")
    assert proc.returncode == 0, proc.stderr
    assert "argus-agent: pthread_mutex_lock hooked" in proc.stderr
    assert "argus-agent: pthread_mutex_unlock hooked" in proc.stderr
    # the main loop locks every 20 ms and the worker every 50 ms for 0.6 s:
    # lock (entry and return) and unlock records, well past 30 of each
    assert _probe_records(argus_cli) >= 90
    # every thread closed its ring and the daemon forgot it
    assert os.listdir(os.path.join(argus_cli.env["ARGUS_RUN_DIR"], "urings")) == []


def test_glib_hooks_after_dlopen(argus_cli):
    require_tracing()
    argus_cli.start(size="64M")
    proc = _run(argus_cli, "/usr/bin/python3", "-c", GLIB_SCRIPT)
    assert proc.returncode == 0, proc.stderr
    assert "argus-agent: g_main_context_dispatch hooked" in proc.stderr
    assert "argus-agent: g_main_context_wakeup hooked" in proc.stderr
    # 50 dispatches (begin + end) and one wakeup, besides the mutex records
    assert _probe_records(argus_cli) >= 101


def test_exit_status_is_the_programs(argus_cli):
    require_tracing()
    argus_cli.start(size="64M")
    assert _run(argus_cli, "/bin/sh", "-c", "exit 7").returncode == 7
