"""The client of the multi-host test: quick requests to the HTTP service
(so the hosts exchange enough messages to synchronise their clocks), one
that hangs on the Redis behind it for SECONDS, then quick ones again.

Usage: multihost_client.py ADDR PORT SECONDS FLAG
Prints {"pid": ...} first, then waits for FLAG.go to exist (the tracers are
started in between: the process exists before them, like any process a
tracer started later finds), prints {"done": true} after the requests and
lives on until FLAG.end exists (the tracers stop first: an exited process's
tid can be seen again, as a new thread, by the records of its reaping).
It waits in short select() timeouts, an idle event loop: no wait of its
own but the hung request lasts long enough to be a hang.
"""
import http.client
import json
import os
import select
import sys


def idle_until(path):
    while not os.path.exists(path):
        select.select([], [], [], 0.05)


def main():
    addr, port, secs, flag = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    print(json.dumps({"pid": os.getpid()}), flush=True)
    idle_until(flag + ".go")
    conn = http.client.HTTPConnection(addr, port)     # blocking reads: a synchronous wait, not a poll

    def get(path):
        conn.request("GET", path)
        r = conn.getresponse()
        body = r.read()
        assert r.status == 200, (r.status, body)

    for phase in (40, None, 40):
        if phase is None:
            get(f"/slow?s={secs}")
            continue
        for _ in range(phase):
            select.select([], [], [], 0.05)        # an idle event-loop wait between requests
            get("/")
    print(json.dumps({"done": True}), flush=True)
    idle_until(flag + ".end")


if __name__ == "__main__":
    main()
