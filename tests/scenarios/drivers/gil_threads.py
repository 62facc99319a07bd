"""A CPython program whose main thread starves for the GIL: a worker thread
runs a regular expression with catastrophic backtracking, and CPython's
regex engine never releases the GIL.  The main thread, which only wants to
run a few bytecodes between event-loop waits, sits in take_gil(): timed 5 ms
condition waits, each followed by a check of the GIL's `locked` flag (a
data flag) and a drop request the worker never sees.

  gil_threads.py SECONDS [DELAY [GIL_LOCKED_OFFSET]]
DELAY: seconds before the worker starts the regex (default 1);
GIL_LOCKED_OFFSET: offset of _PyRuntime.ceval.gil.locked in _PyRuntime, to
report the flag's runtime address as "gil_locked_addr".
Prints {"pid", "tid", "worker_tid"[, "gil_locked_addr"]} first.
"""
import ctypes
import json
import os
import re
import select
import sys
import threading
import time

# Catastrophic backtracking that grows about 1.6x per character (Fibonacci),
# fine-grained enough to calibrate; the regex engine never releases the GIL.
PATTERN = re.compile(r"(a|aa)+$")
GROWTH = 1.618


def backtrack(n):
    return PATTERN.match("a" * n + "b")


def calibrate(seconds):
    n = 16
    while True:
        t0 = time.perf_counter()
        backtrack(n)
        dt = time.perf_counter() - t0
        if dt > 0.05:
            break
        n += 1
    while dt < seconds:
        n, dt = n + 1, dt * GROWTH
    return n


def main():
    seconds = float(sys.argv[1])
    delay = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
    n = calibrate(seconds * 1.3)   # margin: load may drop after calibrating
    started = threading.Event()
    info = {"pid": os.getpid(), "tid": threading.get_native_id()}
    if len(sys.argv) > 3:
        runtime = ctypes.addressof(ctypes.c_int.in_dll(ctypes.pythonapi, "_PyRuntime"))
        info["gil_locked_addr"] = hex(runtime + int(sys.argv[3]))

    def worker():
        info["worker_tid"] = threading.get_native_id()
        started.set()
        time.sleep(delay)          # let the main thread settle into its loop
        backtrack(n)

    t = threading.Thread(target=worker, name="regex-worker")
    t.start()
    started.wait()
    print(json.dumps(info), flush=True)
    # The main loop runs until the worker is done (bounded), so the main
    # thread never blocks in join() while the worker still holds the GIL.
    end = time.monotonic() + 60
    ticks = 0
    wakeup_r, _ = os.pipe()
    while time.monotonic() < end and (t.is_alive() or ticks < 5):
        # The main loop's idle wait: an event-loop wait (select on its wakeup
        # pipe, 20 ms timeout), so the hang starts when the GIL is lost, not
        # with the loop.
        select.select([wakeup_r], [], [], 0.02)
        ticks += 1
    t.join()


if __name__ == "__main__":
    main()
