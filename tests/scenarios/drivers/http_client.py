"""An HTTP client on one keep-alive connection: N quick GETs, then GET PATH,
blocking in recv() until the answer comes.

  http_client.py PORT N PATH [PATH2]
With PATH2: GET PATH (it starts the trouble), print {"ready": true}, wait
0.3 s (or, with --gate, for a line on stdin), then GET PATH2 as the request
that blocks.
Prints {"pid", "tid"} first.
"""
import http.client
import json
import os
import select
import sys
import threading


def main():
    gate = "--gate" in sys.argv
    argv = [a for a in sys.argv if a != "--gate"]
    port, n, path = int(argv[1]), int(argv[2]), argv[3]
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)
    # No timeout: a socket with a timeout waits in poll() first (see the
    # nginx scenario's notes in docs/scenarios.md).
    con = http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(n):
        select.select([], [], [], 0.02)
        con.request("GET", "/quick")
        assert con.getresponse().read() in (b"ok", b"quick"), "bad quick reply"
    if len(argv) > 4:
        con.request("GET", path)
        con.getresponse().read()
        print(json.dumps({"ready": True}), flush=True)
        if gate:
            sys.stdin.readline()
        else:
            select.select([], [], [], 0.3)
        path = argv[4]
    con.request("GET", path)
    resp = con.getresponse()
    assert resp.status == 200, resp.status
    resp.read()


if __name__ == "__main__":
    main()
