"""A threaded Python service: the main thread and two workers share one
threading.Lock for short critical sections (so the lock's futex is waited on
and woken from every side: a mutex).  One worker then takes the lock and,
while holding it, makes a call to Redis that does not come back for
SECONDS (the server is in DEBUG SLEEP): the main thread blocks on the lock.

  lock_worker.py PORT SECONDS
Prints {"pid", "tid", "holder_tid"} first.
"""
import json
import os
import socket
import sys
import threading
import time

lock = threading.Lock()
counter = [0]


def encode(*parts):
    return (f"*{len(parts)}\r\n" + "".join(f"${len(str(p).encode())}\r\n{p}\r\n" for p in parts)).encode()


def critical(spin):
    with lock:
        end = time.perf_counter() + spin
        while time.perf_counter() < end:
            counter[0] += 1


def main():
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    info = {"pid": os.getpid(), "tid": threading.get_native_id()}
    stop = threading.Event()
    go_slow = threading.Event()
    ready = threading.Barrier(3)

    def churn(slow):
        if slow:
            info["holder_tid"] = threading.get_native_id()
        sock = socket.create_connection(("127.0.0.1", port))
        ready.wait()
        while not stop.is_set():
            critical(0.002)
            time.sleep(0.001)
            if slow and go_slow.is_set():
                with lock:
                    sock.sendall(encode("DEBUG", "SLEEP", seconds))
                    sock.recv(100)
                return

    workers = [threading.Thread(target=churn, args=(i == 0,)) for i in range(2)]
    for w in workers:
        w.start()
    ready.wait()
    print(json.dumps(info), flush=True)
    t_slow = time.monotonic() + 1.5
    while time.monotonic() < t_slow + seconds + 1.0:
        if time.monotonic() > t_slow:
            go_slow.set()
        critical(0.002)
        time.sleep(0.001)
    stop.set()
    for w in workers:
        w.join()


if __name__ == "__main__":
    main()
