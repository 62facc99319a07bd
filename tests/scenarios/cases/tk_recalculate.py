"""GUI: a Tk application under Xvfb whose main loop stalls: an after()
callback runs a 3.5 s computation on the main thread, so the window handles
no X event meanwhile (the spinning-cursor case of paper §6.1)."""
from harness import LONG_RUNNING, Scenario, Truth
import servers

SCENARIO = Scenario(
    name="tk_recalculate",
    summary="Tk app (tkinter, Tcl/Tk 8.6) under Xvfb computes 3.5 s in an after() callback",
    hung="the Tk application's main thread, out of its event loop",
    spinning_type=LONG_RUNNING,
    root="the same main thread, running the callback",
    root_type=LONG_RUNNING,
    apt=(("xvfb", "Xvfb"), ("tk8.6", "/usr/share/tcltk/tk8.6")),
    gui=True,
)


def setup(ctx):
    import tkinter  # noqa: F401  (the interpreter's Tk binding: fail early, clearly)
    ctx.state["display"] = servers.xvfb(ctx)


def reproduce(ctx):
    import os
    env = dict(os.environ, DISPLAY=ctx.state["display"])
    app, ids = ctx.driver("tk_app.py", 3.5, env=env)
    ctx.finish(app)
    return Truth(ids["pid"], ids["tid"], roots=[(ids["pid"], ids["tid"])])
