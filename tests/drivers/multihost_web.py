"""An HTTP service in front of Redis, for the multi-host test: GET / asks
Redis a quick question (INCR), GET /slow?s=SECONDS runs a Lua script that
keeps Redis's main thread busy that long (the hang's root cause, one host
further).  One thread, one keep-alive Redis connection, HTTP/1.1.

Usage: multihost_web.py LISTEN_ADDR PORT REDIS_ADDR REDIS_PORT
Prints {"pid": ...} once it listens.
"""
import http.server
import json
import os
import socket
import sys
import urllib.parse

BUSY = ("local t0 = redis.call('TIME') local s = tonumber(t0[1]) + tonumber(t0[2]) / 1e6 "
        "local n = 0 while true do local t = redis.call('TIME') "
        "if tonumber(t[1]) + tonumber(t[2]) / 1e6 - s > tonumber(ARGV[1]) then break end "
        "n = n + 1 end return n")


class Redis:
    def __init__(self, addr, port):
        self.sock = socket.create_connection((addr, port))

    def call(self, *parts):
        payload = f"*{len(parts)}\r\n" + "".join(f"${len(p.encode())}\r\n{p}\r\n" for p in parts)
        self.sock.sendall(payload.encode())
        reply = self.sock.recv(65536)
        if not reply.endswith(b"\r\n"):
            raise RuntimeError(f"short reply {reply!r}")
        return reply


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        if url.path == "/slow":
            secs = urllib.parse.parse_qs(url.query).get("s", ["3"])[0]
            body = self.server.redis.call("EVAL", BUSY, "0", secs)
        else:
            body = self.server.redis.call("INCR", "hits")
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    addr, port, raddr, rport = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    srv = http.server.HTTPServer((addr, port), Handler)
    srv.redis = Redis(raddr, rport)
    print(json.dumps({"pid": os.getpid()}), flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
