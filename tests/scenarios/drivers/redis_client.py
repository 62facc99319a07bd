"""Small Redis clients (RESP over a plain socket) that drive a real
redis-server into the hangs its users meet.

  redis_client.py PORT lua SECONDS        quick SETs, then EVAL of a Lua script
                                          that keeps the server's main thread busy
  redis_client.py PORT debug_sleep SECONDS quick SETs, then DEBUG SLEEP: the
                                          server's main thread sleeps
  redis_client.py PORT consume N          N quick BLPOPs on list q, then one more
                                          that waits for the slow producer
  redis_client.py PORT produce N SECONDS  N quick LPUSHes to q (a little work
                                          before each), then SECONDS of work
                                          before the last LPUSH
  redis_client.py PORT pipeline SECONDS   pipelined bursts of 64 SETs every 5 ms
                                          (keeps the server replying and
                                          receiving back to back)
Prints {"pid": ..., "tid": ...} first.
"""
import json
import os
import select
import socket
import sys
import threading
import time


def encode(*parts):
    return (f"*{len(parts)}\r\n" + "".join(f"${len(str(p).encode())}\r\n{p}\r\n" for p in parts)).encode()


def command(sock, *parts):
    sock.sendall(encode(*parts))
    return sock.recv(65536)


def burn(seconds):
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += sum(i * i for i in range(2000))
    return n


LUA_BUSY = ("local t0 = redis.call('TIME') local s = tonumber(t0[1]) + tonumber(t0[2]) / 1e6 "
            "local n = 0 while true do local t = redis.call('TIME') "
            "if tonumber(t[1]) + tonumber(t[2]) / 1e6 - s > tonumber(ARGV[1]) then break end "
            "n = n + 1 end return n")


def warm_up(sock, n=40):
    for i in range(n):
        select.select([], [], [], 0.02)   # the client's idle wait between requests
        reply = command(sock, "SET", f"key{i}", i)
        assert reply.startswith(b"+OK"), reply


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)
    sock = socket.create_connection(("127.0.0.1", port))
    if mode == "lua":
        warm_up(sock)
        reply = command(sock, "EVAL", LUA_BUSY, 0, sys.argv[3])
        assert reply.startswith(b":"), reply
    elif mode == "debug_sleep":
        warm_up(sock)
        reply = command(sock, "DEBUG", "SLEEP", sys.argv[3])
        assert reply.startswith(b"+OK"), reply
    elif mode == "consume":
        for _ in range(int(sys.argv[3]) + 1):
            reply = command(sock, "BLPOP", "q", 0)
            assert reply.startswith(b"*2"), reply
    elif mode == "produce":
        n, seconds = int(sys.argv[3]), float(sys.argv[4])
        for i in range(n):
            burn(0.02)
            assert command(sock, "LPUSH", "q", f"job{i}").startswith(b":"), i
        burn(seconds)
        assert command(sock, "LPUSH", "q", "slow-job").startswith(b":")
    elif mode == "pipeline":
        end = time.monotonic() + float(sys.argv[3])
        burst = b"".join(encode("SET", f"p{os.getpid()}:{i}", i) for i in range(64))
        while time.monotonic() < end:
            sock.sendall(burst)
            got = b""
            while got.count(b"\r\n") < 64:
                got += sock.recv(65536)
            time.sleep(0.005)
    sock.close()


if __name__ == "__main__":
    main()
