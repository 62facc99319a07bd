"""A TCP server on loopback with a thread per connection; a request "slow"
computes for SECONDS on that thread before it answers.  Prints {"pid",
"port"} first."""
import json
import os
import socket
import sys
import threading
import time

SECONDS = float(sys.argv[1])
lsock = socket.socket()
lsock.bind(("127.0.0.1", 0))
lsock.listen()


def handle(conn):
    while True:
        req = conn.recv(100)
        if not req:
            return
        t = time.time()
        while req == b"slow" and time.time() - t < SECONDS:
            pass
        conn.send(b"ok")


print(json.dumps({"pid": os.getpid(), "port": lsock.getsockname()[1]}), flush=True)
while True:
    c, _ = lsock.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
