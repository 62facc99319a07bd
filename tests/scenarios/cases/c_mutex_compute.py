"""As c_mutex_sleeper, but the worker computes while it holds the mutex
(8 s on the CPU): the root cause is LongRunning, still running when tracing
stops."""
from harness import LONG_RUNNING, LONG_WAIT, Scenario
from cases import c_mutex_sleeper

SCENARIO = Scenario(
    name="c_mutex_compute",
    summary="poll() loop blocked on a pthread mutex a worker holds while computing 8 s (still hung at trace end)",
    hung="the main thread, in pthread_mutex_lock (futex wait, still waiting at trace end)",
    spinning_type=LONG_WAIT,
    root="the worker thread holding the mutex, on the CPU (reached by the mutex's owner field)",
    root_type=LONG_RUNNING,
    features=("ownership",),
)


def setup(ctx):
    pass


def reproduce(ctx):
    return c_mutex_sleeper.run(ctx, "compute")
