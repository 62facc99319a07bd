"""A C program's poll() event loop blocked on a pthread mutex that a worker
thread holds while it sleeps (slow I/O under the lock), debugged while the
hang is still going on: the worker took the lock 1 s after start and sleeps
8 s; tracing stops about 5 s into it.  The main thread's futex wait has not
ended, so no wakeup edge leads anywhere, and the mutex had no earlier
contention to learn from: only the mutex's owner field (glibc keeps the
owner's tid beside the lock word) names the holder."""
import time

from harness import LONG_WAIT, Scenario, Truth

HOLD_S = 8.0
HANG_S = 3.5

SCENARIO = Scenario(
    name="c_mutex_sleeper",
    summary="poll() loop blocked on a pthread mutex a worker holds while sleeping 8 s (still hung at trace end)",
    hung="the main thread, in pthread_mutex_lock (futex wait, still waiting at trace end)",
    spinning_type=LONG_WAIT,
    root="the worker thread holding the mutex, sleeping in nanosleep (reached by the mutex's owner field)",
    root_type=LONG_WAIT,
    features=("ownership",),
)


def program():
    from support.programs import program as test_program   # built by the tests, not shipped
    return test_program("argus-mutex-holder")


def setup(ctx):
    pass


def run(ctx, mode):
    import json
    import subprocess
    app = ctx.spawn([program(), mode, str(HOLD_S), "1.0"], stdout=subprocess.PIPE, text=True)
    ids = json.loads(app.stdout.readline())
    time.sleep(1.0 + HANG_S)           # the user runs argus while the program is still hung
    return Truth(ids["pid"], ids["tid"], roots=[(ids["pid"], ids["worker_tid"])])


def reproduce(ctx):
    return run(ctx, "sleep")
