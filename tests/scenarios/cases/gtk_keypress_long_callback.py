"""GUI input: a GTK 3 application (PyGObject) under Xvfb, started with
`argus run --`, whose key-press handler computes 3 s on the main thread.
A real key press (XTEST, `xdotool key`) starts the hang.  The trampolines
on libxcb's event reads (dylib-instrument/hooks/xcb.json) record the key
press as an `input` event (GTK 3 reads it as an XInput 2 event), the graph
opens a vertex there, and the LongRunning slice stops at it: the diagnosis
names the dispatch on the main thread and says the key press started it
(feature "input": slice origin `input`)."""
import os
import subprocess
import time

from harness import DRIVERS, LONG_RUNNING, PY, Scenario, ScenarioError, Truth
import servers

SYSTEM_PY = "/usr/bin/python3"   # Debian's python3-gi is built for the system interpreter
COMPUTE_S = 3.0

SCENARIO = Scenario(
    name="gtk_keypress_long_callback",
    summary="GTK 3 app under Xvfb (argus run) computes 3 s in its key-press handler; a real key press starts it",
    hung="the GTK application's main thread, in the key-press handler",
    spinning_type=LONG_RUNNING,
    root="the same main thread, running the handler; the slice stops at the key press (input event)",
    root_type=LONG_RUNNING,
    apt=(("xvfb", "Xvfb"), ("xdotool", "xdotool"), ("python3-gi", None), ("gir1.2-gtk-3.0", None)),
    gui=True,
    features=("input",),
)


def setup(ctx):
    ctx.state["display"] = servers.xvfb(ctx)


def reproduce(ctx):
    import json
    env = dict(ctx.argus.env, DISPLAY=ctx.state["display"], NO_AT_BRIDGE="1")
    app = ctx.spawn([PY, "-m", "argus.cli", "run", "--", SYSTEM_PY, os.path.join(DRIVERS, "gtk_keypress_app.py"),
                     str(COMPUTE_S)], env=env, stdout=subprocess.PIPE, text=True)
    line = app.stdout.readline()
    if not line:
        raise ScenarioError(f"the GTK app exited ({app.wait()}) before reporting its window")
    ids = json.loads(line)
    time.sleep(0.5)
    # focus the window (no window manager under Xvfb), then a real key press through XTEST
    key = subprocess.run(["xdotool", "windowfocus", "--sync", str(ids["xid"]), "key", "space"],
                         env=env, capture_output=True, text=True, timeout=30)
    if key.returncode != 0:
        raise ScenarioError(f"xdotool could not send the key: {key.stderr.strip()[-200:]}")
    done = ctx.finish(app, timeout=60)
    if not done.get("done"):
        raise ScenarioError("the GTK app never received the key press")
    time.sleep(0.5)
    return Truth(ids["pid"], ids["tid"], roots=[(ids["pid"], ids["tid"])], extra={"keyval": done.get("key")})
