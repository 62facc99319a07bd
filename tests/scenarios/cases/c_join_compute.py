"""A shutdown hang: a C program's poll() event loop ends and its main thread
joins a worker that is still computing (8 s on the CPU, no lock held),
debugged while the join still waits.  No wakeup has ended the join, and
nothing was ever handed between the threads: only the join's futex, the
worker's tid word that the kernel clears at its exit (clear_child_tid),
names the thread it waits for (a thread_exit ownership edge)."""
from harness import LONG_RUNNING, LONG_WAIT, Scenario
from cases import c_mutex_sleeper

SCENARIO = Scenario(
    name="c_join_compute",
    summary="main thread joins a worker still computing 8 s at shutdown (still hung at trace end)",
    hung="the main thread, in pthread_join (futex wait on the worker's tid word, still waiting at trace end)",
    spinning_type=LONG_WAIT,
    root="the worker thread, on the CPU (reached by the join's thread_exit edge)",
    root_type=LONG_RUNNING,
    features=("ownership",),
    fast=True,
)


def setup(ctx):
    pass


def reproduce(ctx):
    return c_mutex_sleeper.run(ctx, "join")
