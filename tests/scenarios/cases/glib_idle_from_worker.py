"""A GLib main loop hangs in an idle callback that a worker thread added
(g_idle_add from another thread, no explicit wakeup): the callback computes
4 s on the main thread.  Run under `argus run`: the trampolines record the
dispatch (callback_begin/end on the GMainContext) and the worker's
g_source_attach as an enqueue on the same context, so the graph has a
message edge from the worker's enqueue to the dispatch.  Ground truth: the
root cause is the dispatch on the main thread (LongRunning); the causal
chain reaches the worker that queued it (feature "enqueue")."""
import os
import subprocess
import time

from harness import DRIVERS, LONG_RUNNING, PY, Scenario, Truth

COMPUTE_S = 4.0
ADD_AFTER_S = 1.0

SCENARIO = Scenario(
    name="glib_idle_from_worker",
    summary="GLib main loop stuck 4 s in an idle callback a worker thread added (argus run: trampolines)",
    hung="the main thread, in g_main_context_dispatch of the idle source",
    spinning_type=LONG_RUNNING,
    root="the dispatch on the main thread (the idle callback computing), queued by the worker's g_idle_add",
    root_type=LONG_RUNNING,
    features=("enqueue",),
    threshold_s=2.0,
)


def setup(ctx):
    pass


def reproduce(ctx):
    import json
    app = ctx.spawn([PY, "-m", "argus.cli", "run", "--", PY, os.path.join(DRIVERS, "glib_idle_worker.py"),
                     str(COMPUTE_S), str(ADD_AFTER_S)], env=ctx.argus.env, stdout=subprocess.PIPE, text=True)
    ids = json.loads(app.stdout.readline())
    ctx.finish(app, timeout=60)
    time.sleep(0.5)
    return Truth(ids["pid"], ids["tid"], roots=[(ids["pid"], ids["tid"])],
                 extra={"enqueue_tid": ids["worker_tid"], "obj": ids["ctx"]})
