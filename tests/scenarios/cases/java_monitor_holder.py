"""A Java program (OpenJDK 17, HotSpot): the main thread and a worker share
one lock object for short synchronized sections (the monitor is inflated and
both threads block on it and are woken through it), then the worker enters
the monitor and computes on the CPU for 6 s while holding it; the main thread
blocks entering a synchronized block on it.  HotSpot parks a contended
monitor entry in the kernel (a futex, through the thread's pthread
mutex / condition variable) and the worker's monitor exit unparks it; as
the monitor's only waiter, JDK 17 parks it with a timeout that grows to 1 s
and rechecks the monitor, so the 6 s wait is a run of futex waits that time
out (1, 8, 64, 512 ms, then 1 s each) and the last one ends with the
worker's wakeup.  The true chain is main -> the worker holding the monitor,
on the CPU.  The Java main thread is not the process's first thread (the
launcher runs main on a new thread and joins it): the driver reports its
native tid, and `argus debug` gets only the pid (by_pid): it must see that
the process's first thread only joins the Java main thread."""
import json
import os
import shutil
import subprocess

from harness import DRIVERS, LONG_RUNNING, LONG_WAIT, Scenario, ScenarioError, Skip, Truth

HOLD_S = 6.0

SCENARIO = Scenario(
    name="java_monitor_holder",
    summary="Java main thread blocked entering a synchronized block a worker holds while computing 6 s",
    hung="the Java main thread, entering the contended monitor (futex wait)",
    spinning_type=LONG_WAIT,
    root="the worker thread holding the monitor, on the CPU",
    root_type=LONG_RUNNING,
    # javac proves the JDK: `java File.java` compiles the source with jdk.compiler, which the JRE lacks
    apt=(("openjdk-17-jdk-headless", "javac"),),
    by_pid=True,
)


def setup(ctx):
    if not shutil.which("java"):
        raise Skip("java is not on PATH (openjdk-17-jdk-headless)")


def reproduce(ctx):
    app = ctx.spawn(["java", os.path.join(DRIVERS, "MonitorHolder.java"), str(HOLD_S)],
                    stdout=subprocess.PIPE, text=True)
    line = app.stdout.readline()
    if not line:
        app.wait(timeout=30)
        raise ScenarioError(f"MonitorHolder.java exited ({app.returncode}) before reporting its tids")
    ids = json.loads(line)
    ctx.finish(app)
    return Truth(ids["pid"], ids["tid"], roots=[(ids["pid"], ids["worker_tid"])])
