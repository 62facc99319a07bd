"""A client of busy_tcp_server.py: ten quick requests, then "slow", whose
answer it waits for in recv().  Prints {"pid", "tid"} before the slow one."""
import json
import os
import socket
import sys
import time

s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
for _ in range(10):
    s.send(b"fast")
    s.recv(10)
    time.sleep(0.02)
print(json.dumps({"pid": os.getpid(), "tid": os.getpid()}), flush=True)
s.send(b"slow")
s.recv(10)
