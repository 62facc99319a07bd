"""End to end: `argus debug --auto --json` follows ownership to the holder of
what the hung thread waits for or polls, on hangs recorded by the real
tracer from real programs:

  - a poll() loop blocked on a pthread mutex a worker holds while sleeping,
    debugged while it is still hung (tests/programs/mutex_holder.c): no
    wakeup ends the wait, only the mutex's owner field names the worker;
  - a process polling a flock() lock (try, fail, sleep 20 ms) while another
    holds it and sleeps: file-lock edges name the holder;
  - a CPython thread starving for the GIL while another thread runs C code
    that never releases it, no bp_watch: the GIL's holder is named.
Without the ownership step each of these stops at the hung thread itself.
"""
import json
import subprocess
import sys
import textwrap
import time

from support.programs import program


def debug(tracing, pid, tid):
    tracing.wait_drained()
    tracing.stop()
    return tracing.json("debug", "--buffer", tracing.buffer, "--pid", str(pid), "--tid", str(tid), "--json",
                        "--auto")


def causes(report):
    return [(c["pid"], c["tid"], c["block_type"]) for c in report["root_causes"]]


def test_mutex_holder_of_a_hang_still_going_on(tracing):
    app = subprocess.Popen([program("argus-mutex-holder"), "sleep", "8", "0.5"], stdout=subprocess.PIPE, text=True)
    try:
        ids = json.loads(app.stdout.readline())
        time.sleep(0.5 + 3.0)
        report = debug(tracing, ids["pid"], ids["tid"])
    finally:
        app.kill()
        app.wait()
    sp = report["spinning"]
    assert (sp["block_type"], sp["ongoing"]) == ("LongWait", True)
    assert (sp["owner"]["tid"], sp["owner"]["kind"]) == (ids["worker_tid"], "futex_owner")
    assert report["path"][1]["role"] == "owner" and report["path"][1]["edge_in"]["type"] == "ownership"
    assert (ids["pid"], ids["worker_tid"], "LongWait") in causes(report)


def run_py(code, *args):
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], stdout=subprocess.PIPE,
                            stdin=subprocess.PIPE, text=True)


HOLDER = """
    import fcntl, json, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print(json.dumps({"pid": os.getpid()}), flush=True)
    time.sleep(float(sys.argv[2]))
"""

POLLER = """
    import fcntl, json, os, sys, threading, time
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)
    sys.stdin.readline()
    while True:
        fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            os.close(fd)
            time.sleep(0.02)
"""


def test_file_lock_poller_names_the_holder(tracing, tmp_path):
    lock = str(tmp_path / "x.lock")
    holder = run_py(HOLDER, lock, 3.0)
    h = json.loads(holder.stdout.readline())
    poller = run_py(POLLER, lock)
    p = json.loads(poller.stdout.readline())
    poller.stdin.write("go\n")
    poller.stdin.flush()
    assert poller.wait(timeout=30) == 0 and holder.wait(timeout=30) == 0
    report = debug(tracing, p["pid"], p["tid"])
    assert report["spinning"]["block_type"] == "RepeatedYield"
    assert (report["spinning"]["owner"]["pid"], report["spinning"]["owner"]["kind"]) == (h["pid"], "file_lock")
    assert (h["pid"], h["pid"], "LongWait") in causes(report)
    assert report["root_causes"][0]["advice"] is None


GIL = """
    import json, os, select, sys, threading
    sys.set_int_max_str_digits(0)
    digits = "7" * int(sys.argv[1])
    info = {"pid": os.getpid(), "tid": threading.get_native_id()}
    def work():
        info["worker_tid"] = threading.get_native_id()
        select.select([], [], [], 0.5)
        int(digits)              # quadratic C code: never releases the GIL
    t = threading.Thread(target=work)
    t.start()
    while "worker_tid" not in info:
        select.select([], [], [], 0.01)
    print(json.dumps(info), flush=True)
    while t.is_alive():
        select.select([], [], [], 0.01)
"""


def test_gil_starvation_names_the_gil_holder_without_bp_watch(tracing):
    # int(str) of n digits is quadratic: about 0.8 s for 400k digits here, so 900k take 4 s (>= 2 s threshold)
    app = run_py(GIL, 900_000)
    ids = json.loads(app.stdout.readline())
    assert app.wait(timeout=120) == 0
    report = debug(tracing, ids["pid"], ids["tid"])
    assert report["spinning"]["block_type"] == "RepeatedYield"
    assert report["spinning"]["owner"]["tid"] == ids["worker_tid"]
    primary = [c for c in report["root_causes"] if c["primary"]]
    assert [(c["tid"], c["block_type"]) for c in primary] == [(ids["worker_tid"], "LongRunning")]
