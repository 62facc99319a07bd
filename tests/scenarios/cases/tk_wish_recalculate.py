"""GUI: a Tcl/Tk application run by wish (Tk 8.6's own shell) under Xvfb
whose main loop stalls: an after() callback computes for 3.5 s on the main
thread. Unlike tkinter, wish's main loop blocks in Tcl's notifier (a
condition wait fed by the notifier thread's select()), so the idle loop is
a blocking wait, not a sleep-poll."""
import os
import subprocess

from harness import DRIVERS, LONG_RUNNING, Scenario, Truth
import servers

SCENARIO = Scenario(
    name="tk_wish_recalculate",
    summary="wish (Tcl/Tk 8.6) app under Xvfb computes 3.5 s in an after() callback",
    hung="wish's main thread, out of its event loop",
    spinning_type=LONG_RUNNING,
    root="the same main thread, running the Tcl callback",
    root_type=LONG_RUNNING,
    apt=(("xvfb", "Xvfb"), ("tk8.6", "wish8.6")),
    gui=True,
)


def setup(ctx):
    ctx.state["display"] = servers.xvfb(ctx)


def reproduce(ctx):
    import json
    env = dict(os.environ, DISPLAY=ctx.state["display"])
    app = ctx.spawn(["wish8.6", os.path.join(DRIVERS, "tk_recalculate.tcl"), "3.5"],
                    stdout=subprocess.PIPE, text=True, env=env)
    ids = json.loads(app.stdout.readline())
    app.stdout.read()
    app.wait(timeout=60)
    return Truth(ids["pid"], ids["tid"], roots=[(ids["pid"], ids["tid"])])
