"""Real programs under `argus run --` (issue 10, real-world safety): a Python
GTK 3 app under Xvfb, node with timers and fs, redis-server driven by
redis-cli.  Each must do its work and exit as it does without the agent, and
the agent must have recorded from it (so a run without hooks cannot pass)."""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from conftest import IN_CI, require_tracing
from argus.hooks import hookspec

SYSTEM_PY = "/usr/bin/python3"   # python3-gi lives in the system interpreter


def _need(*exes):
    for exe in exes:
        if not (shutil.which(exe) or os.path.exists(exe)):
            if IN_CI:
                pytest.fail(f"{exe} missing: scripts/setup.sh installs it")
            pytest.skip(f"{exe} not installed")


def _argus_run(argus_cli, *cmd, env=None, **kw):
    return subprocess.Popen([sys.executable, "-m", "argus.cli", "run", "--verbose", "--", *cmd],
                            env=dict(argus_cli.env, **(env or {})), text=True, **kw)


def _events(argus_cli, pid, *types):
    argus_cli.wait_drained()
    argus_cli.stop()
    args = ["events", "--buffer", argus_cli.buffer, "--json", "--pid", str(pid)]
    for t in types:
        args += ["--type", t]
    return [json.loads(line) for line in argus_cli.run(*args).stdout.splitlines()]


def _probe(symbol):
    return {h.symbol: i for i, h in enumerate(hookspec.load())}[symbol]


GTK_APP = """
import json, os, threading
import gi
gi.require_version('Gtk', '3.0')
from gi.repository import GLib, Gtk

win = Gtk.Window(title='argus run')
label = Gtk.Label(label='0')
win.add(label)
win.show_all()
ticks = {'timeout': 0, 'idle': 0}

def tick():
    ticks['timeout'] += 1
    label.set_text(str(ticks['timeout']))
    if ticks['timeout'] == 20:
        # a worker hands the last step to the main loop (g_idle_add from another thread)
        threading.Thread(target=lambda: GLib.idle_add(done)).start()
        return False
    return True

def done():
    ticks['idle'] += 1
    win.destroy()
    Gtk.main_quit()
    return False

GLib.timeout_add(10, tick)
Gtk.main()
print(json.dumps(dict(ticks, pid=os.getpid())), flush=True)
"""


def _xvfb(tmp_path):
    for n in range(150, 200):
        if not os.path.exists(f"/tmp/.X11-unix/X{n}") and not os.path.exists(f"/tmp/.X{n}-lock"):
            break
    proc = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "640x480x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 15
    while not os.path.exists(f"/tmp/.X11-unix/X{n}"):
        assert proc.poll() is None and time.monotonic() < deadline, "Xvfb did not start"
        time.sleep(0.05)
    return proc, f":{n}"


def test_gtk_app_runs_normally(argus_cli, tmp_path):
    _need("Xvfb", SYSTEM_PY)
    if subprocess.run([SYSTEM_PY, "-c", "import gi; gi.require_version('Gtk', '3.0')"],
                      capture_output=True).returncode != 0:
        pytest.fail("python3-gi with GTK 3 missing") if IN_CI else pytest.skip("python3-gi with GTK 3 not installed")
    require_tracing()
    argus_cli.start()   # 1G: a busy machine wraps a small buffer over the records
    xvfb, display = _xvfb(tmp_path)
    try:
        proc = _argus_run(argus_cli, SYSTEM_PY, "-c", GTK_APP, env={"DISPLAY": display, "NO_AT_BRIDGE": "1"},
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = proc.communicate(timeout=120)
    finally:
        xvfb.terminate()
        xvfb.wait(timeout=10)
    assert proc.returncode == 0, err
    result = json.loads(out)
    assert (result["timeout"], result["idle"]) == (20, 1)
    events = _events(argus_cli, result["pid"], "callback_begin", "callback_end", "enqueue")
    begins = [e for e in events if e["type"] == "callback_begin"]
    assert len(begins) >= 21, len(begins)      # 20 timeouts and the idle, at least
    # the idle added from the worker: an enqueue recorded on a thread that is not the main one
    attaches = [e for e in events if e["type"] == "enqueue" and e["probe_id"] == _probe("g_source_attach")]
    assert any(e["tid"] != result["pid"] for e in attaches), attaches


NODE_TIMERS_FS = """
const fs = require('fs'), path = require('path'), os = require('os');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'argus-node-'));
let timers = 0, files = 0;
function step() {
  if (++timers < 10) return setTimeout(step, 5);
  const p = path.join(dir, 'f');
  fs.writeFile(p, 'x'.repeat(4096), (err) => {       // the libuv thread pool
    if (err) throw err;
    fs.readFile(p, (err, data) => {
      if (err) throw err;
      files = data.length;
      fs.rmSync(dir, { recursive: true });
      console.log(JSON.stringify({ pid: process.pid, timers, files }));
    });
  });
}
setTimeout(step, 5);
"""


def test_node_timers_and_fs_run_normally(argus_cli):
    _need("node")
    require_tracing()
    argus_cli.start()   # 1G: a busy machine wraps a small buffer over the records
    proc = _argus_run(argus_cli, shutil.which("node"), "-e", NODE_TIMERS_FS,
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "argus-agent: uv_async_send hooked" in err
    result = json.loads(out)
    assert (result["timers"], result["files"]) == (10, 4096)
    # each fs request completes on a pool thread, which wakes the loop: uv_async_send off the main thread
    sends = [e for e in _events(argus_cli, result["pid"], "enqueue") if e["probe_id"] == _probe("uv_async_send")]
    assert any(e["tid"] != result["pid"] for e in sends), sends


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cli(port, *args):
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True, text=True,
                          timeout=30).stdout.strip()


def test_redis_server_runs_normally(argus_cli, tmp_path):
    _need("redis-server", "redis-cli")
    require_tracing()
    argus_cli.start()   # 1G: a busy machine wraps a small buffer over the records
    port = _free_port()
    server = _argus_run(argus_cli, shutil.which("redis-server"), "--port", str(port), "--bind", "127.0.0.1",
                        "--save", "", "--appendonly", "no", "--dir", str(tmp_path),
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        while _cli(port, "PING") != "PONG":
            assert server.poll() is None and time.monotonic() < deadline, "redis-server did not come up"
            time.sleep(0.1)
        pid = int(_cli(port, "INFO", "server").split("process_id:")[1].split()[0])
        assert _cli(port, "SET", "argus", "trampoline") == "OK"
        assert _cli(port, "GET", "argus") == "trampoline"
        for _ in range(3):
            _cli(port, "INCR", "n")
        assert _cli(port, "GET", "n") == "3"
        _cli(port, "SHUTDOWN", "NOSAVE")
        err = server.communicate(timeout=30)[1]
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert server.returncode == 0, err
    assert "argus-agent: pthread_mutex_lock hooked" in err
    # redis's background (bio) threads and jemalloc lock pthread mutexes
    locks = _events(argus_cli, pid, "mutex_lock")
    assert locks, "no mutex_lock records from redis-server"


GTK_LONG_APP = """
import ctypes, json, os, sys
import gi
gi.require_version('Gtk', '3.0')
from gi.repository import GLib, Gtk

glib = ctypes.CDLL('libglib-2.0.so.0')
entry = ctypes.cast(glib.g_main_context_dispatch, ctypes.c_void_p).value
win = Gtk.Window(title='argus stop')
win.show_all()
ticks = [0]

def tick():
    ticks[0] += 1
    return True

def first():
    print(json.dumps({'pid': os.getpid(), 'entry': entry, 'before': ctypes.string_at(entry, 8).hex()}), flush=True)
    return False

GLib.timeout_add(10, tick)
GLib.idle_add(first)
GLib.timeout_add(4000, Gtk.main_quit)
Gtk.main()
print(json.dumps({'after': ctypes.string_at(entry, 8).hex(), 'ticks': ticks[0]}), flush=True)
"""


def _file_bytes(pid, addr, n):
    """The bytes at addr as the library file holds them (the mapping's offset)."""
    for line in open(f"/proc/{pid}/maps"):
        f = line.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        if lo <= addr < hi and len(f) >= 6:
            with open(f[5], "rb") as lib:
                lib.seek(int(f[2], 16) + addr - lo)
                return lib.read(n).hex()
    raise AssertionError(f"{addr:#x} not mapped")


def test_gtk_app_keeps_running_when_tracing_stops(argus_cli, tmp_path):
    """`argus stop` under a running GTK app: the agent puts the original
    entry bytes back (read from the library file), records nothing more,
    and the app's main loop goes on until it quits by itself."""
    _need("Xvfb", SYSTEM_PY)
    if subprocess.run([SYSTEM_PY, "-c", "import gi; gi.require_version('Gtk', '3.0')"],
                      capture_output=True).returncode != 0:
        pytest.fail("python3-gi with GTK 3 missing") if IN_CI else pytest.skip("python3-gi with GTK 3 not installed")
    require_tracing()
    argus_cli.start()
    xvfb, display = _xvfb(tmp_path)
    try:
        proc = _argus_run(argus_cli, SYSTEM_PY, "-c", GTK_LONG_APP, env={"DISPLAY": display, "NO_AT_BRIDGE": "1"},
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        start = json.loads(proc.stdout.readline())
        original = _file_bytes(start["pid"], start["entry"], 8)
        argus_cli.stop()                    # while the main loop runs
        out, err = proc.communicate(timeout=120)
    finally:
        xvfb.terminate()
        xvfb.wait(timeout=10)
    assert proc.returncode == 0, err
    end = json.loads(out)
    assert start["before"].startswith("e9") and start["before"] != original   # hooked: jmp rel32
    assert "argus-agent: tracing stopped: hooks removed" in err
    assert end["after"] == original                                           # the library's own bytes again
    assert end["ticks"] > 100, end                                           # 10 ms ticks for 4 s went on
    rings = os.listdir(os.path.join(argus_cli.env["ARGUS_RUN_DIR"], "urings"))
    assert not any(n.startswith(f"{start['pid']}-") for n in rings)
