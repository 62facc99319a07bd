"""X11 input through the trampolines, end to end: real X clients under
Xvfb, started with `argus run --`, get real key and button events through
XTEST (xdotool); the libxcb hooks (dylib-instrument/hooks/xcb.json) must
record them as `input` records of the client's pid, with the kind and the
detail (keycode / button) the client itself saw.  GTK 3 reads them as
XInput 2 events, Tk (wish) as core events: both forms of the spec."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import require_tracing

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "scenarios"))
import servers  # noqa: E402
from harness import Context  # noqa: E402

SYSTEM_PY = "/usr/bin/python3"   # Debian's python3-gi is built for the system interpreter

GTK_APP = """
import json, os, sys, gi
gi.require_version("Gtk", "3.0"); gi.require_version("GdkX11", "3.0")
from gi.repository import GdkX11, GLib, Gtk
win = Gtk.Window(title="argus-input"); win.set_default_size(200, 100)
seen = []
def on_map(w, _e):
    print(json.dumps({"pid": os.getpid(), "xid": w.get_window().get_xid()}), flush=True)
def on_key(_w, e):
    seen.append(["key_press", e.hardware_keycode])
def on_button(_w, e):
    seen.append(["button_press", e.button])
    GLib.timeout_add(500, Gtk.main_quit)
win.add_events(0x100)   # GDK_BUTTON_PRESS_MASK
win.connect("map-event", on_map); win.connect("key-press-event", on_key)
win.connect("button-press-event", on_button)
win.show_all(); GLib.timeout_add(20000, Gtk.main_quit); Gtk.main()
print(json.dumps({"seen": seen}), flush=True)
"""

WISH_APP = """
wm title . argus-input
wm geometry . 200x100+0+0
set seen {}
bind . <KeyPress> {lappend seen "\\"key_press\\", %k"}
bind . <ButtonPress> {lappend seen "\\"button_press\\", %b"; after 500 finish}
proc finish {} {
    global seen
    set items {}
    foreach s $seen { lappend items "\\[$s\\]" }
    puts "{\\"seen\\": \\[[join $items {, }]\\]}"; flush stdout; exit 0
}
update
puts "{\\"pid\\": [pid], \\"xid\\": [expr {[winfo id .]}]}"; flush stdout
after 20000 finish
"""


def _need(*tools):
    for t in tools:
        if not (shutil.which(t) or os.path.exists(t)):
            pytest.skip(f"{t} not installed (scripts/setup.sh)")


@pytest.fixture
def display(tmp_path):
    _need("Xvfb", "xdotool")
    ctx = Context(str(tmp_path / "x"))
    os.makedirs(ctx.tmp, exist_ok=True)
    try:
        yield ctx, servers.xvfb(ctx)
    finally:
        ctx.close()


def _drive(argus_cli, ctx, disp, cmd, agent=True):
    """Starts cmd (under `argus run`, or plainly for the uprobe path), sends
    a key and a click into its window; returns (pid, [[kind, detail], ...]
    the client saw, its input records)."""
    env = dict(argus_cli.env, DISPLAY=disp, NO_AT_BRIDGE="1")
    wrap = [sys.executable, "-m", "argus.cli", "run", "--verbose", "--"] if agent else []
    app = ctx.spawn([*wrap, *cmd], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = app.stdout.readline()
    assert first, app.stderr.read()
    ids = json.loads(first)
    time.sleep(0.3)
    xdo = subprocess.run(["xdotool", "windowfocus", "--sync", str(ids["xid"]), "key", "space",
                          "mousemove", "--window", str(ids["xid"]), "20", "20", "click", "1"],
                         env=env, capture_output=True, text=True, timeout=30)
    assert xdo.returncode == 0, xdo.stderr
    out, err = app.communicate(timeout=60)
    assert app.returncode == 0, err
    if agent:
        assert "argus-agent: xcb_poll_for_event hooked" in err
    seen = json.loads(out.strip().splitlines()[-1])["seen"]
    argus_cli.wait_drained()
    argus_cli.stop()
    rows = argus_cli.run("events", "--buffer", argus_cli.buffer, "--json", "--pid", str(ids["pid"]),
                         "--type", "input").stdout
    return ids["pid"], seen, [json.loads(line) for line in rows.splitlines()]


def _check(pid, seen, inputs):
    assert seen, "the client saw no event"
    assert inputs and all(e["type"] == "input" and e["pid"] == pid for e in inputs)
    got = [(e["kind"], e["detail"]) for e in inputs]
    for kind, detail in seen:
        assert (kind, detail) in got, (seen, got)
        release = kind.replace("press", "release")
        assert (release, detail) in got, (seen, got)
    key = next(e for e in inputs if e["kind"] == "key_press")
    button = next(e for e in inputs if e["kind"] == "button_press")
    # the X server's clock: the key was sent before the click
    assert 0 < key["x_time_ms"] <= button["x_time_ms"]
    assert key["ts_ns"] < button["ts_ns"]
    assert not key["synthetic"]     # XTEST: real device events, not XSendEvent


def _need_gtk():
    _need(SYSTEM_PY)
    if subprocess.run([SYSTEM_PY, "-c", "import gi; gi.require_version('Gtk', '3.0')"]).returncode:
        pytest.skip("python3-gi with GTK 3 not installed")


def test_gtk3_key_and_button_as_input_records(argus_cli, display):
    require_tracing()
    _need_gtk()
    ctx, disp = display
    argus_cli.start(size="512M")
    _check(*_drive(argus_cli, ctx, disp, [SYSTEM_PY, "-c", GTK_APP]))


def test_gtk3_input_records_through_uprobes(argus_cli, display):
    """The same spec through uretprobes (`argus start --uprobe-hooks xcb`):
    a GTK 3 app started plainly, the BPF program reads the returned event."""
    require_tracing()
    _need_gtk()
    ctx, disp = display
    out = argus_cli.run("start", "--buffer", argus_cli.buffer, "--size", "512M", "--uprobe-hooks", "xcb")
    assert "skipped" not in out.stdout + out.stderr, out.stdout + out.stderr
    pid, seen, inputs = _drive(argus_cli, ctx, disp, [SYSTEM_PY, "-c", GTK_APP], agent=False)
    _check(pid, seen, inputs)
    assert all(e["cpu"] != 0xFFFF for e in inputs)     # the kernel's records, not a ring's


def test_tk_key_and_button_as_input_records(argus_cli, display):
    require_tracing()
    _need("wish")
    ctx, disp = display
    script = os.path.join(ctx.tmp, "input.tcl")
    with open(script, "w") as f:
        f.write(WISH_APP)
    argus_cli.start(size="512M")
    _check(*_drive(argus_cli, ctx, disp, ["wish", script]))
