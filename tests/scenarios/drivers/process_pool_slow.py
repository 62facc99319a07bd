"""Issue 22, item 8: a process pool whose caller waits on one slow worker.
multiprocessing.Pool(4) maps eight jobs, one at a time per worker: seven
take 10 ms, one computes for SECONDS.  The caller's main thread waits for
the map's result; the pool's own threads (task, result and worker
handlers) relay.  Prints {"pid", "tid"} first, then {"slow"} (the pid of
the worker that ran the slow job)."""
import json
import multiprocessing
import os
import sys
import time


def job(seconds):
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x += sum(i * i for i in range(2000))
    return os.getpid(), seconds


def main():
    seconds = float(sys.argv[1])
    with multiprocessing.Pool(4) as pool:
        pool.map(job, [0.01] * 8, chunksize=1)         # every worker up and warm
        print(json.dumps({"pid": os.getpid(), "tid": os.getpid()}), flush=True)
        out = pool.map(job, [0.01] * 7 + [seconds], chunksize=1)
    print(json.dumps({"slow": next(pid for pid, s in out if s == seconds)}), flush=True)


if __name__ == "__main__":
    main()
