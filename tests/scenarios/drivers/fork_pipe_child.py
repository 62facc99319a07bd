"""The issue-22 program: the parent forks a child that computes for 3 s and
then writes one byte to a pipe; the parent reads the pipe.  Before that it
polls with select() timeouts (an idle loop), and fd numbers are reused: the
pipe's read end gets an fd the interpreter used for its own files at
start-up.  Prints {"pid", "tid", "child"} first."""
import json
import os
import select
import sys
import time

COMPUTE_S = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
r, w = os.pipe()
child = os.fork()
if child == 0:
    os.close(r)
    t = time.time()
    while time.time() - t < COMPUTE_S:
        pass
    os.write(w, b"x")
    os._exit(0)
os.close(w)
for _ in range(50):
    select.select([], [], [], 0.01)
print(json.dumps({"pid": os.getpid(), "tid": os.getpid(), "child": child}), flush=True)
os.read(r, 1)
os.wait()
