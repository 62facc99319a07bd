"""Issue 22, item 4: streams from a busy producer.  A Python program's main
thread waits on a thread pool's future; the pool's worker reads `xz -9`'s
output in 64 KiB chunks while xz compresses 8 MB of text (about 4 s of
CPU here).  Each of the worker's short pipe waits is ended by xz: together
they are one LongWait on that producer, and the walk follows it to xz
(LongRunning), not stopping at the worker as a RepeatedYield."""
import random

from harness import LONG_RUNNING, LONG_WAIT, Scenario, Truth

SCENARIO = Scenario(
    name="py_pool_compressor_stream",
    summary="a pool worker reads xz's output in chunks while xz computes; the main thread waits on its future",
    hung="the main thread, in the future's wait (LongWait)",
    spinning_type=LONG_WAIT,
    root="xz, on the CPU (it ends each of the worker's reads)",
    root_type=LONG_RUNNING,
    apt=(("xz-utils", "xz"),),
    cross_process=True,
)


def setup(ctx):
    rnd = random.Random(22)
    words = ["".join(rnd.choice("abcdefghijklmnop") for _ in range(rnd.randint(2, 9))) for _ in range(5000)]
    with open(ctx.path("input.txt"), "w") as f:
        while f.tell() < 8_000_000:
            f.write(" ".join(rnd.choice(words) for _ in range(10000)) + "\n")


def reproduce(ctx):
    app, ids = ctx.driver("pool_compressor.py", ctx.path("input.txt"))
    done = ctx.finish(app)
    return Truth(ids["pid"], ids["tid"], roots=[(done["xz"], None)])
