"""An asyncio service that hands a CPU job to a thread pool
(loop.run_in_executor), believing the event loop stays responsive: the job
converts a huge decimal string to an int (int(str) is quadratic: the
CVE-2020-10735 shape, here with the digit limit lifted as big-number
applications do), and that C code never releases the GIL.  The event loop's
thread comes back from epoll_wait every 10 ms (a heartbeat timer) and then
starves in take_gil(): timed 5 ms condition waits.

  asyncio_bigint.py SECONDS [DELAY]
Prints {"pid", "tid", "worker_tid"} first (tid: the event loop's thread).
"""
import asyncio
import concurrent.futures
import json
import os
import sys
import threading
import time


def calibrate(seconds):
    n = 20000
    while True:
        s = "9" * n
        t0 = time.perf_counter()
        int(s)
        dt = time.perf_counter() - t0
        if dt > 0.05:
            break
        n *= 2
    return int(n * (seconds / dt) ** 0.5)      # quadratic in the number of digits


async def main(seconds, delay):
    digits = "7" * calibrate(seconds * 1.3)   # margin: load may drop after calibrating
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="job")
    loop = asyncio.get_running_loop()
    worker_tid = await loop.run_in_executor(pool, threading.get_native_id)
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id(), "worker_tid": worker_tid}), flush=True)
    ticks = 0

    async def heartbeat():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    hb = asyncio.create_task(heartbeat())
    await asyncio.sleep(delay)
    await loop.run_in_executor(pool, int, digits)
    await asyncio.sleep(0.1)
    hb.cancel()
    pool.shutdown()


if __name__ == "__main__":
    sys.set_int_max_str_digits(0)
    asyncio.run(main(float(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 1.0))
