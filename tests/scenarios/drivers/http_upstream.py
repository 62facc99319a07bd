"""The application server behind nginx: Python's http.server, one thread;
GET /slow computes for SECONDS (a report nobody cached), anything else
answers at once.

  http_upstream.py PORT SECONDS
Prints {"pid", "tid"} first.
"""
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if self.path == "/slow":
            end = time.monotonic() + float(sys.argv[2])
            n = 0
            while time.monotonic() < end:
                n += sum(i * i for i in range(5000))
            body = str(n).encode()
        else:
            body = b"ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def main():
    server = HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
