"""An HTTP client on one keep-alive connection: N quick GETs, then GET PATH,
blocking in recv() until the answer comes.

  http_client.py PORT N PATH
Prints {"pid", "tid"} first.
"""
import http.client
import json
import os
import select
import sys
import threading


def main():
    port, n, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)
    # No timeout: a socket with a timeout waits in poll() first (see the
    # nginx scenario's notes in docs/scenarios.md).
    con = http.client.HTTPConnection("127.0.0.1", port)
    for _ in range(n):
        select.select([], [], [], 0.02)
        con.request("GET", "/quick")
        assert con.getresponse().read() in (b"ok", b"quick"), "bad quick reply"
    con.request("GET", path)
    resp = con.getresponse()
    assert resp.status == 200, resp.status
    resp.read()


if __name__ == "__main__":
    main()
