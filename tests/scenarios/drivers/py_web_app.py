"""A small Python web application (http.server, one thread serving) with two
ways to stall a request while its serving thread polls:

  py_web_app.py PORT gil SECONDS      a background indexing thread runs a
                                      backtracking regex (never releases the
                                      GIL) for about SECONDS when /index is hit;
                                      requests meanwhile starve for the GIL
  py_web_app.py PORT sqlite DB        each request INSERTs into a SQLite
                                      database (busy timeout 30 s): while
                                      another process holds the write lock the
                                      handler sleeps and retries
Prints {"pid", "tid"[, "indexer_tid"]} first.
"""
import json
import os
import re
import sqlite3
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

# Catastrophic backtracking that grows about 1.6x per character (Fibonacci),
# fine-grained enough to calibrate; the regex engine never releases the GIL.
PATTERN = re.compile(r"(a|aa)+$")
GROWTH = 1.618


def calibrate(seconds):
    n = 16
    while True:
        t0 = time.perf_counter()
        PATTERN.match("a" * n + "b")
        dt = time.perf_counter() - t0
        if dt > 0.05:
            break
        n += 1
    while dt < seconds:
        n, dt = n + 1, dt * GROWTH
    return n


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    info = {"pid": os.getpid(), "tid": threading.get_native_id()}
    reindex = threading.Event()
    con = None
    if mode == "gil":
        n = calibrate(float(sys.argv[3]) * 1.3)   # margin: load may drop after calibrating

        def indexer():
            info["indexer_tid"] = threading.get_native_id()
            reindex.wait()
            PATTERN.match("a" * n + "b")

        threading.Thread(target=indexer, name="indexer", daemon=True).start()
        while "indexer_tid" not in info:
            time.sleep(0.01)
    else:
        con = sqlite3.connect(sys.argv[3], timeout=30, isolation_level=None)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            if self.path == "/index":
                reindex.set()
            if con is not None:
                con.execute("INSERT INTO log(msg) VALUES (?)", (self.path,))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *a):
            pass

    server = HTTPServer(("127.0.0.1", port), Handler)
    print(json.dumps(info), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
