"""A synchronous X11 round trip stalls a GTK main loop: the app calls
XSync (gdk_display_sync) every frame; another client grabs the X server
(XGrabServer) and sleeps 3.5 s holding the grab, so Xvfb answers nobody
else. The app's main thread waits in poll() on the X socket, a wait site
its main loop never uses; the server answers once the grabber ungrabs."""
import os
import subprocess
import time

from harness import DRIVERS, LONG_WAIT, Scenario, ScenarioError, Truth
import servers

SYSTEM_PY = "/usr/bin/python3"   # Debian's python3-gi is built for the system interpreter

SCENARIO = Scenario(
    name="x11_grab_round_trip",
    summary="GTK 3 app blocks 3.5 s in an XSync round trip while another client holds a server grab",
    hung="the GTK application's main thread, in XSync's poll() on the X socket",
    spinning_type=LONG_WAIT,
    root="the grabbing client's main thread, sleeping with the X server grabbed (through Xvfb)",
    root_type=LONG_WAIT,
    apt=(("xvfb", "Xvfb"), ("python3-gi", None), ("gir1.2-gtk-3.0", None)),
    cross_process=True,
    gui=True,
)


def setup(ctx):
    ctx.state["display"] = servers.xvfb(ctx)


def _start(ctx, script, *args, stdin=None):
    import json
    env = dict(os.environ, DISPLAY=ctx.state["display"], NO_AT_BRIDGE="1")
    proc = ctx.spawn([SYSTEM_PY, os.path.join(DRIVERS, script), *map(str, args)],
                     stdout=subprocess.PIPE, stdin=stdin, text=True, env=env)
    line = proc.stdout.readline()
    if not line:
        raise ScenarioError(f"{script} exited ({proc.wait()}) before reporting its pids")
    return proc, json.loads(line)


def reproduce(ctx):
    app, ids = _start(ctx, "gtk_sync_app.py", 7)
    grabber, gids = _start(ctx, "x11_grabber.py", 3.5, stdin=subprocess.PIPE)
    time.sleep(1.5)
    grabber.stdin.write("go\n")
    grabber.stdin.flush()
    if "grabbed" not in grabber.stdout.readline():
        raise ScenarioError("the grabber did not grab the server")
    if grabber.wait(timeout=60) != 0 or app.wait(timeout=60) != 0:
        raise ScenarioError("the X clients did not finish cleanly")
    return Truth(ids["pid"], ids["tid"], roots=[(gids["pid"], gids["tid"])])
