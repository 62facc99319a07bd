"""Two users of one SQLite database file.

  sqlite_writer.py DB hold SECONDS   the sqlite3 command-line shell takes the
                                     write lock (BEGIN IMMEDIATE) and holds it
                                     SECONDS before COMMIT (an admin's open
                                     transaction); runs the real `sqlite3` CLI
                                     and prints its pid
  sqlite_writer.py DB write N        an application (Python's sqlite3 module,
                                     timeout 30 s: SQLite's busy handler sleeps
                                     and retries) makes N quick INSERTs, then
                                     one that meets the lock (after a line on stdin)
Prints {"pid", "tid"} first.
"""
import json
import os
import select
import sqlite3
import subprocess
import sys
import threading
import time


def main():
    db, mode = sys.argv[1], sys.argv[2]
    if mode == "hold":
        shell = subprocess.Popen(["sqlite3", db], stdin=subprocess.PIPE, text=True)
        print(json.dumps({"pid": shell.pid, "tid": shell.pid}), flush=True)
        shell.stdin.write("BEGIN IMMEDIATE;\nINSERT INTO log(msg) VALUES ('admin');\n")
        shell.stdin.flush()
        time.sleep(float(sys.argv[3]))
        shell.stdin.write("COMMIT;\n.quit\n")
        shell.stdin.close()
        sys.exit(shell.wait())
    con = sqlite3.connect(db, timeout=30, isolation_level=None)
    if mode == "init":
        con.execute("CREATE TABLE IF NOT EXISTS log (id INTEGER PRIMARY KEY, msg TEXT)")
        return
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)
    n = int(sys.argv[3])
    for i in range(n):
        select.select([], [], [], 0.02)
        con.execute("INSERT INTO log(msg) VALUES (?)", (f"app {i}",))
    print(json.dumps({"ready": True}), flush=True)
    sys.stdin.readline()           # the harness says when the shell holds the lock
    con.execute("INSERT INTO log(msg) VALUES ('app final')")


if __name__ == "__main__":
    main()
