"""A shell pipeline inside a command substitution:
`first=$(sort -n FILE | head -n 1)` in a bash script.  sort(1) reads the whole
file and sorts it (about 3.5 s of CPU for 6 M lines) before it writes anything; head waits on
its pipe, bash on the substitution's pipe.  The hang is bash's read; the
root cause is sort, two pipes away, through head (a pipeline stage reading
its input is no root cause by itself)."""
import json
import os
import random
import subprocess
import time

from harness import DRIVERS, LONG_RUNNING, LONG_WAIT, Scenario, ScenarioError, Truth, children_of

SCENARIO = Scenario(
    name="shell_pipeline_sort",
    summary="bash waits on $(sort -n FILE | head -n 1) while sort sorts 6 M lines",
    hung="bash's main thread, in read() of the command substitution's pipe",
    spinning_type=LONG_WAIT,
    root="sort (coreutils), on the CPU before its first write, through head reading its pipe (LongRunning)",
    root_type=LONG_RUNNING,
    apt=(("bash", "bash"), ("coreutils", "sort")),
    cross_process=True,
)

# 3 M lines took 1.8 s of CPU on the 2026-11 machines, under the 2 s threshold at rest
LINES = 6_000_000


def setup(ctx):
    data = ctx.path("numbers.txt")
    rng = random.Random(22)
    with open(data, "w") as f:
        for _ in range(LINES // 1000):
            f.write("".join(f"{rng.getrandbits(40)}.{rng.getrandbits(20)}\n" for _ in range(1000)))
    ctx.state["data"] = data


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        for kid in children_of(todo.pop()):
            out.append(kid)
            todo.append(kid)
    return out


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return None


def reproduce(ctx):
    app = ctx.spawn(["bash", os.path.join(DRIVERS, "cmdsubst_pipeline.sh"), ctx.state["data"]],
                    stdout=subprocess.PIPE, text=True)
    line = app.stdout.readline()
    if not line:
        raise ScenarioError(f"bash exited ({app.wait()}) before reporting its pid")
    ids = json.loads(line)
    sorters, deadline = [], time.monotonic() + 10
    while not sorters and time.monotonic() < deadline:
        sorters = [p for p in descendants(ids["pid"]) if comm(p) == "sort"]
        time.sleep(0.02)
    out = app.stdout.read()
    if app.wait(timeout=120) != 0 or '"first": "' not in out:
        raise ScenarioError(f"the script failed: {out.strip()[-200:]}")
    if not sorters:
        raise ScenarioError("sort was never seen running")
    return Truth(ids["pid"], ids["tid"], roots=[(p, None) for p in sorters])
