"""Issue 22, item 4: a thread-pool worker reads a compressor child's output
in chunks while the child computes.  The main thread submits the job to a
concurrent.futures pool and waits for its result; the worker runs `xz -9`
on INPUT and reads its stdout 64 KiB at a time.  Prints {"pid", "tid"}
first, then {"xz"} (the compressor's pid) when done."""
import concurrent.futures
import json
import os
import subprocess
import sys

INPUT = sys.argv[1]
pids = {}


def compress():
    p = subprocess.Popen(["xz", "-9", "-T1", "-c", INPUT], stdout=subprocess.PIPE, bufsize=0)
    pids["xz"] = p.pid
    total = 0
    while chunk := p.stdout.read(65536):
        total += len(chunk)
    p.wait()
    return total


with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    for _ in range(3):                       # quick jobs first: the pool's threads exist
        pool.submit(len, "warm").result()
    print(json.dumps({"pid": os.getpid(), "tid": os.getpid()}), flush=True)
    size = pool.submit(compress).result()
print(json.dumps({"xz": pids["xz"], "bytes": size}), flush=True)
