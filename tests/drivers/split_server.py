"""A client and an epoll server whose request handling starts at a heuristic
split: the graph's weak program-order edges are on the diagnosis's walk.

    split_server.py REQUESTS HANG_AT HANG_S

The server (a child process) runs an epoll loop on a socketpair; after each
reply it pauses 5 ms (a timed sleep), so the client's next request is
already queued when it calls epoll_wait again: the wait returns without
blocking (an event_loop split opens the vertex that reads the request and
writes the reply; nothing woke it).  Request HANG_AT takes HANG_S seconds
on the CPU: the client's main thread waits in read() that long (a LongWait
hang), and the walk back from the reply that ended it crosses the split.  Prints one JSON line first:
{"client_pid", "server_pid"}.
"""
import json
import os
import select
import socket
import sys
import time


def serve(sock, hang_at, hang_s):
    ep = select.epoll()
    ep.register(sock.fileno(), select.EPOLLIN)
    n = 0
    while True:
        ep.poll()
        data = sock.recv(64)
        if not data:
            return
        n += 1
        if n == hang_at:                 # computes: the handling vertex, opened at the split, is the walk's
            t = time.monotonic()
            while time.monotonic() - t < hang_s:
                pass
        sock.send(b"ok")
        time.sleep(0.005)


def main():
    requests, hang_at, hang_s = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    a, b = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        a.close()
        serve(b, hang_at, hang_s)
        os._exit(0)
    b.close()
    print(json.dumps({"client_pid": os.getpid(), "server_pid": pid}), flush=True)
    time.sleep(0.3)
    for _ in range(requests):
        a.send(b"req")
        a.recv(64)
    a.close()
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
