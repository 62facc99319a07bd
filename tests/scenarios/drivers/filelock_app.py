"""An application that serialises work on a shared resource with py-filelock
(the `filelock` package pip, tox and virtualenv use): FileLock on Linux is
flock(LOCK_EX | LOCK_NB) on the lock file, retried every poll_interval
(0.05 s by default) until the timeout.

  filelock_app.py LOCKFILE N
makes N quick lock / unlock cycles 20 ms apart (nobody else holds the lock),
prints {"ready": true}, waits for a line on stdin (the harness says another
process holds the lock now), then acquires the lock with a 30 s timeout.
Prints {"pid", "tid"} first.
"""
import json
import os
import select
import sys
import threading

from filelock import FileLock


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    lock = FileLock(path, timeout=30)
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)
    for _ in range(n):
        select.select([], [], [], 0.02)
        with lock:
            pass
    print(json.dumps({"ready": True}), flush=True)
    sys.stdin.readline()
    with lock:
        pass


if __name__ == "__main__":
    main()
