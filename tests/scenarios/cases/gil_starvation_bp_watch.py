"""gil_starvation with the data flag watched: bp_watch puts a hardware
watchpoint on the GIL's `locked` word (_PyRuntime.ceval.gil.locked in
libpython, found with gdb from its debug info) while the main thread starves,
so the buffer holds the main thread's reads of the flag and the worker's
write when it finally drops the GIL. Algorithm 1 should fall through from
RepeatedYield to LongWait and reach the worker through the data-flag edge."""
import os
import re
import subprocess
import sysconfig

from harness import LONG_RUNNING, PY, REPEATED_YIELD, Scenario, Skip, Truth, bp_watch_available, bp_watch_exe

SCENARIO = Scenario(
    name="gil_starvation_bp_watch",
    summary="gil_starvation with bp_watch on the GIL's locked flag (data-flag events)",
    hung="the main thread, in take_gil(): timed 5 ms condition waits, reading gil.locked after each",
    spinning_type=REPEATED_YIELD,
    root="the regex worker thread, on the CPU holding the GIL (it writes gil.locked = 0 when it drops it)",
    root_type=LONG_RUNNING,
    apt=(("gdb", "gdb"),),
    features=("data_flag",),
)


def _libpython():
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    name = sysconfig.get_config_var("INSTSONAME") or ""
    path = os.path.join(libdir, name)
    if name and os.path.exists(path) and ".so" in name:
        return path
    return os.path.realpath(PY)   # a static interpreter holds _PyRuntime itself


def setup(ctx):
    if not bp_watch_available():
        raise Skip("bp_watch is not installed (issue 5)")
    image = _libpython()
    out = subprocess.run(["gdb", "-batch", "-ex",
                          "print (long)((char*)&_PyRuntime.ceval.gil.locked - (char*)&_PyRuntime)", image],
                         capture_output=True, text=True).stdout
    m = re.search(r"\$1 = (\d+)", out)
    if not m:
        raise Skip(f"no debug info for _PyRuntime.ceval.gil in {image}: cannot place the watchpoint")
    ctx.state["offset"] = int(m.group(1))


def reproduce(ctx):
    app, ids = ctx.driver("gil_threads.py", 3.5, 3.0, ctx.state["offset"])
    # bp_watch runs until the program exits (--for only bounds it): the worker's
    # final write of the flag, when it drops the GIL, must be in the buffer.
    watch = subprocess.run([bp_watch_exe(), str(ids["pid"]), "--address", ids["gil_locked_addr"],
                            "--size", "4", "--buffer", ctx.argus.buffer, "--for", "40", "--json"],
                           env=ctx.argus.env, capture_output=True, text=True, timeout=60)
    ctx.finish(app)
    if watch.returncode != 0:
        raise Skip(f"bp_watch failed: {(watch.stderr or watch.stdout).strip()[-200:]}")
    return Truth(ids["pid"], ids["tid"], roots=[(ids["pid"], ids["worker_tid"])],
                 extra={"bp_watch": watch.stdout.strip()[-500:]})
