"""PostgreSQL sessions through pg8000 (a pure-Python driver, so the client
blocks in recv() on its socket like most synchronous database clients).

  pg_client.py PORT setup                 creates table t(id, v) with rows 1..100
  pg_client.py PORT hold SECONDS          BEGIN; UPDATE row 1; then keeps the
                                          transaction open SECONDS before COMMIT
                                          (an application that holds a row lock
                                          across slow work of its own)
  pg_client.py PORT pulse K SECONDS       K short transactions on row 1 (held
                                          30 ms each: brief contention), then one
                                          held SECONDS
  pg_client.py PORT update                UPDATEs of row 1 every 20 ms until one
                                          of them waited more than a second
  pg_client.py PORT update_other N        N quick UPDATEs of other rows, then an
                                          UPDATE of row 1 (blocks on the lock)
  pg_client.py PORT query N SECONDS       N quick queries, then a cross join that
                                          keeps its backend on the CPU about SECONDS
Prints {"pid", "tid", "backend"} first (backend: pg_backend_pid()).
"""
import json
import os
import select
import sys
import threading
import time

import pg8000.native


def main():
    port, mode = int(sys.argv[1]), sys.argv[2]
    con = pg8000.native.Connection("postgres", host="127.0.0.1", port=port, database="postgres")
    backend = con.run("SELECT pg_backend_pid()")[0][0]
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id(), "backend": backend}), flush=True)
    if mode == "setup":
        con.run("CREATE TABLE t (id int PRIMARY KEY, v int)")
        con.run("INSERT INTO t SELECT g, 0 FROM generate_series(1, 100) g")
    elif mode == "hold":
        con.run("BEGIN")
        con.run("UPDATE t SET v = v + 1 WHERE id = 1")
        print(json.dumps({"locked": True}), flush=True)
        time.sleep(float(sys.argv[3]))
        con.run("COMMIT")
    elif mode == "pulse":
        for _ in range(int(sys.argv[3])):
            con.run("BEGIN")
            con.run("UPDATE t SET v = v + 1 WHERE id = 1")
            time.sleep(0.03)
            con.run("COMMIT")
            time.sleep(0.03)
        con.run("BEGIN")
        con.run("UPDATE t SET v = v + 1 WHERE id = 1")
        time.sleep(float(sys.argv[4]))
        con.run("COMMIT")
    elif mode == "update":
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            select.select([], [], [], 0.02)
            t0 = time.monotonic()
            con.run("UPDATE t SET v = v + 1 WHERE id = 1")
            if time.monotonic() - t0 > 1.0:
                break
    elif mode == "update_other":
        for i in range(int(sys.argv[3])):
            select.select([], [], [], 0.02)
            con.run("UPDATE t SET v = v + 1 WHERE id = :id", id=2 + i % 90)
        con.run("UPDATE t SET v = v + 1 WHERE id = 1")
    elif mode == "query":
        n, seconds = int(sys.argv[3]), float(sys.argv[4])
        for i in range(n):
            select.select([], [], [], 0.02)
            con.run("SELECT count(*) FROM t WHERE v >= :v", v=i)
        # A CPU-bound join of small in-memory tables (no temp-file spill, so
        # no I/O waits; no JIT, so the time scales with k): calibrated here.
        con.run("SET jit = off")
        query = "SELECT count(*) FROM t a, t b, t c, (SELECT generate_series(1, {})) g"
        t0 = time.monotonic()
        con.run(query.format(2))
        per_k = max(time.monotonic() - t0, 1e-3) / 2
        con.run(query.format(max(1, round(seconds / per_k))))
    con.close()


if __name__ == "__main__":
    main()
