"""Python source of one case: the same roles and links as render_c.py, with
Python's own objects (threading locks, concurrent.futures, fcntl, os.fork).
Snippets are lists of lines; "@" is the link number, WAITER the waiting role.
A future link's role runs on a one-thread pool: its start (hold, ready) is
the pool's first task, the rest the future the waiter waits for."""
import gen

PRELUDE = '''import concurrent.futures, fcntl, os, select, signal, socket, sys, threading, time
DIR = sys.argv[1] if len(sys.argv) > 1 else "."
READY_R, READY_W = os.pipe()
GO_R, GO_W = os.pipe()
THR = {}
HOLD = %r


def ready(role):
    os.write(READY_W, b"%%d %%d %%d\\n" %% (role, os.getpid(), threading.get_native_id()))
    read1(GO_R)  # no role goes downstream before every role holds its link


def read1(fd, n=1):
    if len(os.read(fd, n)) != n:
        sys.exit("failed to read link")


def poll_read(fd, n=1):
    os.set_blocking(fd, False)
    while True:
        try:
            if os.read(fd, n):
                return
        except BlockingIOError:
            time.sleep(0.005)


def stream_pair(family, name):
    lst = socket.socket(family, socket.SOCK_STREAM)
    addr = os.path.join(DIR, name) if family == socket.AF_UNIX else ("127.0.0.1", 0)
    if family == socket.AF_UNIX and os.path.exists(addr):
        os.unlink(addr)
    lst.bind(addr)
    lst.listen(4)
    w = socket.socket(family, socket.SOCK_STREAM)
    w.connect(lst.getsockname())
    h, _ = lst.accept()
    lst.close()
    return [w, h]


def dgram_pair(name):
    a, b = os.path.join(DIR, name + ".w"), os.path.join(DIR, name + ".h")
    for p in (a, b):
        if os.path.exists(p):
            os.unlink(p)
    w, h = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM), socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    w.bind(a)
    h.bind(b)
    h.connect(a)
    w.connect(b)
    return [w, h]


def root_cpu(s):
    end, x = time.monotonic() + s, 0
    while time.monotonic() < end:
        for k in range(2000):
            x += k * k


def root_sleep(s):
    time.sleep(s)


def root_timer(s):
    threading.Event().wait(s)


def root_yield(s):
    end = time.monotonic() + s
    while time.monotonic() < end:
        os.sched_yield()


def root_fsync(s):
    end = time.monotonic() + s
    with open(os.path.join(DIR, "fsync.dat"), "wb") as f:
        while time.monotonic() < end:
            f.write(b"x" * 4096)
            f.flush()
            os.fsync(f.fileno())


def idle_loop():
    ep, r = select.epoll(), os.pipe()[0]
    ep.register(r, select.EPOLLIN)
    while True:
        ep.poll(0.2)


def fd_reuse():
    # a quick wait on a pipe whose numbers the links take next
    for _ in range(3):
        r, w = os.pipe()
        t = threading.Thread(target=lambda: (time.sleep(0.015), os.write(w, b"x")))
        t.start()
        read1(r)
        t.join()
        os.close(r)
        os.close(w)
'''

_FD = {
    "pipe": ("PP@ = os.pipe()", "PP@[0]", "PP@[1]"),
    "socketpair": ("SP@ = socket.socketpair()", "SP@[0].fileno()", "SP@[1].fileno()"),
    "unix_stream": ("US@ = stream_pair(socket.AF_UNIX, 'us@.sock')", "US@[0].fileno()", "US@[1].fileno()"),
    "unix_dgram": ("UD@ = dgram_pair('ud@.sock')", "UD@[0].fileno()", "UD@[1].fileno()"),
    "tcp": ("TCP@ = stream_pair(socket.AF_INET, '')", "TCP@[0].fileno()", "TCP@[1].fileno()"),
}
MECHS = {}
for _n, (_setup, _r, _w) in _FD.items():
    MECHS[_n] = dict(setup=[_setup], wait=[f"read1({_r})"], poll=[f"poll_read({_r})"],
                     release=[f"os.write({_w}, b'x')"])
MECHS["eventfd"] = dict(setup=["EFD@ = os.eventfd(0, os.EFD_SEMAPHORE)"], wait=["os.eventfd_read(EFD@)"],
                        poll=["poll_read(EFD@, 8)"], release=["os.eventfd_write(EFD@, 1)"])
_LOOP = {
    "epoll": (["EP@ = select.epoll()", "EP@.register(PP@[0], select.EPOLLIN)"], "while not EP@.poll(): pass"),
    "poll": (["PO@ = select.poll()", "PO@.register(PP@[0], select.POLLIN)"], "while not PO@.poll(): pass"),
    "select": ([], "select.select([PP@[0]], [], [])"),
}
for _n, (_setup, _wait) in _LOOP.items():
    MECHS[_n] = dict(setup=["PP@ = os.pipe()"] + _setup, wait=[_wait, "read1(PP@[0])"],
                     poll=["poll_read(PP@[0])"], release=["os.write(PP@[1], b'x')"])
MECHS.update({
    "mutex": dict(setup=["MX@ = threading.Lock()"], hold=["MX@.acquire()"], wait=["MX@.acquire()", "MX@.release()"],
                  poll=["while not MX@.acquire(blocking=False):", "    time.sleep(0.005)", "MX@.release()"],
                  release=["MX@.release()"]),
    "condvar": dict(setup=["CV@ = threading.Condition()", "CVN@ = [0, 0]"],
                    wait=["with CV@:", "    CV@.wait_for(lambda: CVN@[0] > CVN@[1])", "    CVN@[1] += 1"],
                    poll=["while True:", "    with CV@:", "        if CVN@[0] > CVN@[1]:", "            CVN@[1] += 1",
                          "            break", "    time.sleep(0.005)"],
                    release=["with CV@:", "    CVN@[0] += 1", "    CV@.notify()"]),
    "semaphore": dict(setup=["SEM@ = threading.Semaphore(0)"], wait=["SEM@.acquire()"],
                      poll=["while not SEM@.acquire(blocking=False):", "    time.sleep(0.005)"],
                      release=["SEM@.release()"]),
    "flock": dict(setup=["FLW@ = os.open(os.path.join(DIR, 'flock@'), os.O_RDWR | os.O_CREAT, 0o600)",
                         "FLH@ = os.open(os.path.join(DIR, 'flock@'), os.O_RDWR | os.O_CREAT, 0o600)"],
                  hold=["fcntl.flock(FLH@, fcntl.LOCK_EX)"],
                  wait=["fcntl.flock(FLW@, fcntl.LOCK_EX)", "fcntl.flock(FLW@, fcntl.LOCK_UN)"],
                  poll=["while True:", "    try:", "        fcntl.flock(FLW@, fcntl.LOCK_EX | fcntl.LOCK_NB)",
                        "        break", "    except OSError:", "        time.sleep(0.005)",
                        "fcntl.flock(FLW@, fcntl.LOCK_UN)"],
                  release=["fcntl.flock(FLH@, fcntl.LOCK_UN)"]),
    "fcntl": dict(setup=["FCW@ = os.open(os.path.join(DIR, 'fcntl@'), os.O_RDWR | os.O_CREAT, 0o600)",
                         "FCH@ = os.open(os.path.join(DIR, 'fcntl@'), os.O_RDWR | os.O_CREAT, 0o600)"],
                  hold=["fcntl.lockf(FCH@, fcntl.LOCK_EX)"],
                  wait=["fcntl.lockf(FCW@, fcntl.LOCK_EX)", "fcntl.lockf(FCW@, fcntl.LOCK_UN)"],
                  poll=["while True:", "    try:", "        fcntl.lockf(FCW@, fcntl.LOCK_EX | fcntl.LOCK_NB)",
                        "        break", "    except OSError:", "        time.sleep(0.005)",
                        "fcntl.lockf(FCW@, fcntl.LOCK_UN)"],
                  release=["fcntl.lockf(FCH@, fcntl.LOCK_UN)"]),
    "waitpid": dict(wait=["os.waitpid(CHILD[@], 0)"],
                    poll=["while os.waitpid(CHILD[@], os.WNOHANG) == (0, 0):", "    time.sleep(0.005)"],
                    release=["os._exit(0)"]),
    "signal": dict(wait=["signal.sigwait({signal.SIGUSR1})"],
                   poll=["while signal.sigtimedwait({signal.SIGUSR1}, 0) is None:", "    time.sleep(0.005)"],
                   release=["signal.pthread_kill(THR[WAITER], signal.SIGUSR1)"]),
    "future": dict(setup=["POOL@ = concurrent.futures.ThreadPoolExecutor(1)"],
                   wait=["POOL@.submit(role@).result()"],
                   poll=["FUT@ = POOL@.submit(role@)", "while not FUT@.done():", "    time.sleep(0.005)"]),
})


def _snip(mech, part, i):
    return [x.replace("@", str(i)).replace("WAITER", str(i - 1)) for x in MECHS[mech].get(part, [])]


def _token(mech):
    return gen.BY_NAME[mech].token


def render(case):
    d = case.depth
    nb = gen.BASELINES if case.noise.get("baselines") else 0
    out = [PRELUDE % case.hold_s, "CHILD = {}"]
    for r in range(d, -1, -1):
        start = ["THR[%d] = threading.get_ident()" % r]
        if r >= 1:
            start += _snip(case.links[r - 1], "hold", r) + [f"ready({r})"]
        body = []
        if r == 1 and nb and _token(case.links[0]):
            body += ["time.sleep(0.3)", f"for _ in range({nb}):", "    time.sleep(0.04)"]
            body += ["    " + x for x in _snip(case.links[0], "release", 1)]
        if r < d:
            nxt = case.links[r]
            if r == 0 and nb and _token(nxt):
                body += [f"for _ in range({nb}):"] + ["    " + x for x in _snip(nxt, "wait", 1)]
            body += _snip(nxt, "poll" if r == 0 and case.hung_mode == "poll" else "wait", r + 1)
        else:
            body.append(f"root_{case.root}(HOLD)")
        if r >= 1:
            body += _snip(case.links[r - 1], "release", r)
        if r >= 1 and case.links[r - 1] == "future":
            # the pool's worker thread: its start is the pool's first task, the rest the future
            out.append(f"def start{r}():\n    " + "\n    ".join(start))
            out.append(f"def role{r}():\n    " + "\n    ".join(body or ["pass"]))
        else:
            out.append(f"def start{r}():\n    pass")
            out.append(f"def role{r}():\n    " + "\n    ".join(start + body))
    out.append(_main(case))
    return "\n\n".join(out) + "\n"


def _main(case):
    d = case.depth
    m = ["def main():", "    global " + ", ".join(_globals(case)) if _globals(case) else "    pass",
         "    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})  # every thread and child inherits it",
         "    load = 0"]
    if case.noise.get("fd_reuse"):
        m.append("    fd_reuse()")
    for i, mech in enumerate(case.links, 1):
        m += ["    " + x for x in _snip(mech, "setup", i)]
    if case.noise.get("load"):
        m += ["    load = os.fork()", "    if load == 0:", "        root_cpu(HOLD + 1)", "        os._exit(0)"]
    groups = [[0]]
    for r in range(1, d + 1):
        if case.placement[r] == "process":
            groups.append([r])
        else:
            groups[-1].append(r)
    # process k's main forks process k+1 before any of its threads start
    m.append("    proc = 0")
    for gi in range(len(groups) - 1):
        lead = groups[gi + 1][0]
        m += [f"    if proc == {gi}:", f"        CHILD[{lead}] = os.fork()",
              f"        if CHILD[{lead}] == 0:", f"            proc = {gi + 1}"]
    for gi, group in enumerate(groups):
        m.append(f"    if proc == {gi}:")
        if gi == 0 and case.noise.get("idle"):
            m.append("        threading.Thread(target=idle_loop, daemon=True).start()")
        for r in group[1:]:
            if case.links[r - 1] == "future":
                m.append(f"        POOL{r}.submit(start{r})")
            else:
                m.append(f"        THREADS[{r}] = threading.Thread(target=role{r}, daemon=True)")
                m.append(f"        THREADS[{r}].start()")
        if gi == 0:
            m += ["        ids = {0: (os.getpid(), threading.get_native_id())}",
                  "        with os.fdopen(READY_R, 'rb', buffering=0) as ready_r:",
                  "            buf = b''",
                  f"            while len(ids) < {d + 1}:",
                  "                buf += ready_r.read(64) if b'\\n' not in buf else b''",
                  "                while b'\\n' in buf:",
                  "                    line, buf = buf.split(b'\\n', 1)",
                  "                    role, pid, tid = map(int, line.split())",
                  "                    ids[role] = (pid, tid)",
                  f"            os.write(GO_W, b'x' * {d})",
                  f"            print(json.dumps({{'roles': [ids[r] for r in range({d + 1})], 'load': load}}), flush=True)",
                  "            role0()",
                  "        sys.stdout.flush()",
                  "        os._exit(0)"]
        else:
            m.append(f"        role{group[0]}()")
            m += [f"        THREADS[{r}].join()" for r in group[1:] if case.links[r - 1] != "future"]
            m.append("        os._exit(0)")
    return "import json\nTHREADS = {}\n\n" + "\n".join(m) + "\n\n\nmain()"


def _globals(case):
    names = set()
    for i, mech in enumerate(case.links, 1):
        for line in _snip(mech, "setup", i):
            if " = " in line:
                names.add(line.split(" = ")[0])
    return sorted(names)
