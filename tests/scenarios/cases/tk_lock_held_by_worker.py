"""Issue 22, item 8 (stable answers): a Tk application's event thread
takes a lock that a worker thread holds while it computes 3.8 s, so the
window freezes.  The same hang recorded again must get the same answer:
the worker (LongRunning), never the event thread itself."""
import os

from harness import LONG_RUNNING, LONG_WAIT, Scenario, Truth
import servers

SCENARIO = Scenario(
    name="tk_lock_held_by_worker",
    summary="a Tk app's event thread waits for a lock a worker thread holds while it computes 3.8 s",
    hung="the Tk application's main thread, in the lock's acquire (LongWait)",
    spinning_type=LONG_WAIT,
    root="the worker thread, on the CPU with the lock held",
    root_type=LONG_RUNNING,
    apt=(("xvfb", "Xvfb"), ("tk8.6", "/usr/share/tcltk/tk8.6")),
    gui=True,
)


def setup(ctx):
    import tkinter  # noqa: F401  (the interpreter's Tk binding: fail early, clearly)
    ctx.state["display"] = servers.xvfb(ctx)


def reproduce(ctx):
    env = dict(os.environ, DISPLAY=ctx.state["display"])
    app, ids = ctx.driver("tk_lock_worker.py", 3.8, env=env)
    done = ctx.finish(app)
    return Truth(ids["pid"], ids["tid"], roots=[(ids["pid"], done["worker"])])
