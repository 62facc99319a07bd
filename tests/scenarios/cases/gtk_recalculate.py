"""GUI: a GTK 3 application (PyGObject) under Xvfb whose main loop stalls: a
GLib timeout callback computes for 3.5 s on the main thread, so no X event
is handled meanwhile. GLib's main loop waits in poll() on the main thread,
the pattern Argus recognises as an event loop."""
import os
import subprocess

from harness import DRIVERS, LONG_RUNNING, Scenario, Truth
import servers

SYSTEM_PY = "/usr/bin/python3"   # Debian's python3-gi is built for the system interpreter

SCENARIO = Scenario(
    name="gtk_recalculate",
    summary="GTK 3 app (PyGObject) under Xvfb computes 3.5 s in a GLib timeout callback",
    hung="the GTK application's main thread, out of GLib's main loop",
    spinning_type=LONG_RUNNING,
    root="the same main thread, running the callback",
    root_type=LONG_RUNNING,
    apt=(("xvfb", "Xvfb"), ("python3-gi", None), ("gir1.2-gtk-3.0", None)),
    gui=True,
)


def setup(ctx):
    ctx.state["display"] = servers.xvfb(ctx)


def reproduce(ctx):
    import json
    env = dict(os.environ, DISPLAY=ctx.state["display"], NO_AT_BRIDGE="1")
    app = ctx.spawn([SYSTEM_PY, os.path.join(DRIVERS, "gtk_app.py"), "3.5"],
                    stdout=subprocess.PIPE, text=True, env=env)
    line = app.stdout.readline()
    if not line:
        raise ValueError(f"the GTK app exited ({app.wait()}) before reporting its pids")
    ids = json.loads(line)
    app.stdout.read()
    app.wait(timeout=60)
    return Truth(ids["pid"], ids["tid"], roots=[(ids["pid"], ids["tid"])])
