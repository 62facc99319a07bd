"""A small client of a real redis-server that hangs the way real Redis users
hang: after a burst of quick requests it sends a Lua script that keeps the
server's single main thread busy, and blocks reading the reply.

Usage: redis_busy_script.py PORT SECONDS [tight]
With "tight" the script computes in the Lua VM between clock checks (one
TIME call per 200000 additions) instead of calling TIME in a loop: a
CPU-bound culprit whose profile is the interpreter's.
Prints {"client_pid": ..., "client_tid": ...} first.
"""
import json
import os
import select
import socket
import sys
import threading


def command(sock, *parts):
    payload = f"*{len(parts)}\r\n" + "".join(f"${len(p.encode())}\r\n{p}\r\n" for p in parts)
    sock.sendall(payload.encode())
    return sock.recv(65536)


def main():
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    print(json.dumps({"client_pid": os.getpid(), "client_tid": threading.get_native_id()}), flush=True)
    sock = socket.create_connection(("127.0.0.1", port))
    for i in range(40):
        # The client's event-loop idle wait between requests.
        select.select([], [], [], 0.02)
        reply = command(sock, "SET", f"key{i}", str(i))
        assert reply.startswith(b"+OK"), reply
    script = ("local t0 = redis.call('TIME') local s = tonumber(t0[1]) + tonumber(t0[2]) / 1e6 "
              "local n = 0 while true do local t = redis.call('TIME') "
              "if tonumber(t[1]) + tonumber(t[2]) / 1e6 - s > tonumber(ARGV[1]) then break end "
              "n = n + 1 end return n")
    if sys.argv[3:] == ["tight"]:
        script = ("local t0 = redis.call('TIME') local s = tonumber(t0[1]) + tonumber(t0[2]) / 1e6 "
                  "local n = 0 while true do for i = 1, 200000 do n = n + i % 7 end "
                  "local t = redis.call('TIME') "
                  "if tonumber(t[1]) + tonumber(t[2]) / 1e6 - s > tonumber(ARGV[1]) then break end "
                  "end return 1")
    reply = command(sock, "EVAL", script, "0", str(seconds))
    assert reply.startswith(b":"), reply
    sock.close()


if __name__ == "__main__":
    main()
