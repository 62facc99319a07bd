"""`argus start` and `argus stop`: run the system-wide tracing daemon.

start spawns argusd with a pipe; the daemon writes "ready" once its BPF
programs are attached and the process snapshot is in the buffer, so start
returns only when tracing is live (or fails with the daemon's one-line error).

An existing file at --buffer is never lost by accident (check_existing_buffer):
an Argus buffer of the requested size (or any size when --size is not given)
is continued: the daemon appends to it, the oldest records going first when
it is full; one of another size is refused unless --force (argusd --fresh
re-creates it); a file that is not an Argus buffer is always refused.
"""
import argparse
import os
import select
import subprocess
import sys
import time

from argus.cli import control
from argus.cli.snapshots import snapshot_dir
from argus.cli.common import (ArgusError, DEFAULT_BUFFER, RUN_DIR, SOCKET_PATH, STATE_DIR, free_disk_bytes, native_path,
                              open_run_dir, parse_size, read_state, remember_buffer, remove_state,
                              require_tracing_privileges, write_state)
from argus.cli.cmd_status import fmt_bytes
from argus.tracer import reader
from argus.tracer import safe_files
from argus.hooks import uprobe_hooks

DEFAULT_SIZE = "2G"
READY_TIMEOUT_S = 60


def register(sub):
    p = sub.add_parser("start", help="start system-wide tracing into a file-backed ring buffer")
    p.add_argument("--buffer", metavar="FILE", default=None,
                   help=f"ring buffer file (default {DEFAULT_BUFFER})")
    p.add_argument("--size", default=None,
                   help=f"buffer size, sparse (default {DEFAULT_SIZE}, or the existing buffer's size); oldest "
                        "records are overwritten when full")
    p.add_argument("--force", action="store_true",
                   help="re-create an existing buffer (its trace is lost) instead of appending to it")
    p.add_argument("--no-stacks", action="store_true",
                   help="do not capture user stacks at blocking waits, and no CPU samples (smaller records, "
                        "less overhead)")
    p.add_argument("--no-syscalls", action="store_true",
                   help="scheduler events only: no syscall records (wait reasons become coarse)")
    p.add_argument("--syscall-probes", choices=("auto", "fentry", "tracepoint"), default="tracepoint",
                   help="how syscalls are hooked: fentry/fexit on the traced ones only (untraced syscalls "
                        "cost nothing), raw_syscalls tracepoints (default), or auto: fentry where the kernel "
                        "allows it (`argus status` says which; the fentry slots have not yet run on a "
                        "kernel that allows them)")
    p.add_argument("--sample-hz", type=_sample_hz, default=99, metavar="HZ",
                   help="CPU samples per second per CPU, with user and kernel stacks (default 99; "
                        "docs/profile.md)")
    p.add_argument("--no-sample", action="store_true", help="no CPU samples (same as --sample-hz 0)")
    p.add_argument("--uprobe-hooks", action="append", default=[], metavar="SPEC",
                   help="also apply this hook spec (glib, pthread, or a .json file) to every process, running "
                        "or not, through uprobes (slower than `argus run`: for low-rate points); repeatable")
    go = p.add_mutually_exclusive_group()
    go.add_argument("--go-probes", action="store_true",
                    help="probe Go programs' scheduler: goroutine ready / execute / park records from uprobes on "
                         "each Go executable that starts, so hangs handed over between goroutines are followed; "
                         "costs a few us per goroutine switch (docs/linux-tracer.md, \"Go programs\")")
    go.add_argument("--no-go-probes", action="store_true", help="leave Go programs unprobed (the default)")
    p.add_argument("--detail", choices=("full", "lean", "auto"), default="full",
                   help="recording tier: full (syscall records, the default), lean (no syscall hooks: each "
                        "blocking wait's syscall is read at its switch-out, much cheaper on syscall-heavy "
                        "machines), or auto (lean, full while a watched event loop is out of its loop past "
                        "--escalate-ms); docs/linux-tracer.md, \"Detail tiers\"")
    p.add_argument("--escalate-ms", type=int, default=100, metavar="MS",
                   help="--detail auto: a watched thread out of its loop this long turns full detail on "
                        "(default 100)")
    p.add_argument("--escalate-on", choices=("loops", "named"), default="loops",
                   help="--detail auto: which threads escalate: every watched event loop (default), or only "
                        "those of --watch-pid / --watch-comm (a busy shared machine has loops out of their "
                        "loop all the time)")
    p.add_argument("--cgroup", metavar="PATH",
                   help="record only this cgroup (v2: a directory of the tree, or a path as /proc/PID/cgroup "
                        "shows it, e.g. /system.slice/docker-ID.scope) and those below it, plus the wakeups "
                        "that cross its boundary; a BPF filter")
    p.add_argument("--netns", metavar="NS",
                   help="record only this network namespace: /var/run/netns/NAME (or NAME), /proc/PID/ns/net or "
                        "an inode number; a BPF filter, like --cgroup")
    g = p.add_argument_group("flight recorder (docs/flight-recorder.md)")
    g.add_argument("--no-hang-detector", action="store_true",
                   help="do not watch event loops for hangs nor keep snapshots of them")
    g.add_argument("--hang-threshold", type=float, default=2.0, metavar="SECONDS",
                   help="an event loop out of its loop this long is a hang (default 2)")
    g.add_argument("--snapshot-before", type=int, default=30, metavar="SECONDS",
                   help="a snapshot starts this long before its hang (default 30)")
    g.add_argument("--snapshot-max-count", type=int, default=20, metavar="N",
                   help="snapshots kept, the oldest deleted first (default 20)")
    g.add_argument("--snapshot-max-total", default="1G", metavar="SIZE",
                   help="all snapshots together at most (default 1G)")
    g.add_argument("--watch-pid", type=int, action="append", default=[], metavar="PID",
                   help="also watch this process (any thread, event loop or not); repeatable; "
                        "sent to a daemon already running")
    g.add_argument("--watch-comm", action="append", default=[], metavar="NAME",
                   help="also watch processes of this name; repeatable")
    p.set_defaults(func=run_start)

    p = sub.add_parser("stop", help="stop tracing; the buffer stays readable")
    p.set_defaults(func=run_stop)


def check_existing_buffer(path, size_bytes, force=False):
    """What to do with the file at `path` before tracing into it: returns
    (size in bytes, argusd flags).  No file: size_bytes (or DEFAULT_SIZE), no
    flags.  An Argus buffer: continued when size_bytes is None or equal to its
    size (argusd appends); otherwise ArgusError, or with force re-created
    (--fresh).  Anything else: ArgusError, force or not (the path may be a
    typo for something precious; argusd refuses it too)."""

    if not os.path.lexists(path) or (os.path.isfile(path) and os.path.getsize(path) == 0):
        return (parse_size(DEFAULT_SIZE) if size_bytes is None else size_bytes), []
    try:
        existing = int(reader.buffer_stats(path)["file_size"])
    except reader.TraceError as e:
        raise ArgusError(f"{path} exists and is not an Argus buffer ({e}); choose another path")
    if size_bytes is None or size_bytes == existing:
        return existing, []
    if force:
        return size_bytes, ["--fresh"]
    raise ArgusError(f"{path} exists and holds a trace ({fmt_bytes(existing)} buffer, not {fmt_bytes(size_bytes)}): "
                     f"`--force` overwrites it, --size {existing} appends to it, or choose another --buffer")


def start_daemon(buffer, size, extra_flags=(), force=False):
    """Start argusd unless it runs already; returns the buffer path in use.
    size None: the existing buffer's size, else DEFAULT_SIZE."""
    require_tracing_privileges()
    running = control.status()
    if running is not None:
        current = running.get("buffer")
        if buffer and os.path.abspath(buffer) != current:
            raise ArgusError(f"already tracing into {current} (pid {running.get('pid')}); `argus stop` first")
        return current, False
    check_state_dir()
    buffer = os.path.abspath(buffer or DEFAULT_BUFFER)
    size_bytes, fresh = check_existing_buffer(buffer, None if size is None else parse_size(size), force)
    os.makedirs(os.path.dirname(buffer), exist_ok=True)
    check_free_disk(buffer, size_bytes, bool(fresh))

    argusd = native_path("argusd")
    read_fd, write_fd = os.pipe()
    log_path = os.path.join(RUN_DIR, "argusd.log")
    cmd = [argusd, "--buffer", buffer, "--size", str(size_bytes), "--socket", SOCKET_PATH,
           "--ready-fd", str(write_fd), "--log", log_path, *fresh, *extra_flags]
    try:
        with _open_log(log_path) as log:
            subprocess.Popen(cmd, pass_fds=(write_fd,), stdin=subprocess.DEVNULL,
                             stdout=log, stderr=log, start_new_session=True)
    except OSError as e:
        os.close(read_fd)
        raise ArgusError(f"failed to start {argusd}: {e.strerror}")
    finally:
        os.close(write_fd)
    line = _read_ready(read_fd)
    if line != "ready":
        err = line[len("error:"):].strip() if line.startswith("error:") else ""
        raise ArgusError(f"tracing did not start: {err or _last_log_line(log_path) or 'the daemon exited'}")
    write_state({"buffer": buffer, "socket": SOCKET_PATH, "size": size_bytes})
    remember_buffer(buffer)
    return buffer, True


def check_state_dir():
    """STATE_DIR (snapshots, the last buffer's name, the default buffer) is
    root's (or the caller's), nobody else may write it, and it is no link:
    refused otherwise, with one line.  Someone who can write it could swap
    the snapshot directory inside it for another one (issue 23)."""
    fd = open_run_dir(create=True, directory=STATE_DIR)
    os.close(fd)


MIN_FREE = 64 << 20    # below this the ring would hold next to nothing


def check_free_disk(buffer, size_bytes, fresh):
    """Free space for the whole buffer, new or continued (its blocks already
    allocated count): refused when even MIN_FREE (or the buffer, if smaller)
    cannot be had; otherwise, when the buffer cannot be allocated in full,
    one line says so (argusd then keeps tracing in the chunks it gets, and
    `argus status` says disk_full)."""
    allocated = 0
    if not fresh:
        try:
            allocated = os.stat(buffer).st_blocks * 512
        except OSError:
            pass
    free = free_disk_bytes(buffer)
    if free + allocated < min(MIN_FREE, size_bytes):
        raise ArgusError(f"not enough free disk for {buffer}: {fmt_bytes(free)} free on its file system")
    if allocated + free < size_bytes:
        print(f"argus: only {fmt_bytes(free)} free for the {fmt_bytes(size_bytes)} buffer {buffer} "
              f"({fmt_bytes(allocated)} allocated): the buffer cannot be allocated in full; once the disk "
              "is full the ring keeps the chunks it has (`argus status` says disk_full)", file=sys.stderr)


def _open_log(log_path):
    """argusd.log, appended to, in the verified RUN_DIR (created 0700): never
    through a link, never another user's file (common.open_run_dir)."""
    dir_fd = open_run_dir(create=True)
    try:
        fd = safe_files.open_file(dir_fd, os.path.basename(log_path), os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                                  shown=log_path)
    finally:
        os.close(dir_fd)
    os.fchmod(fd, 0o600)
    return os.fdopen(fd, "ab")


def _read_ready(fd):
    """First line the daemon writes on the ready pipe ("ready" or "error: ...").

    argusd daemonizes, so the process we spawned exits early while its child
    keeps the pipe: wait for a line or for EOF (every writer gone), not for
    the spawned pid.
    """
    deadline = time.monotonic() + READY_TIMEOUT_S
    data = b""
    try:
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                return f"error: the daemon was not ready within {READY_TIMEOUT_S} s"
            readable, _, _ = select.select([fd], [], [], min(left, 0.5))
            if not readable:
                continue
            chunk = os.read(fd, 256)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    return data.decode(errors="replace").split("\n")[0].strip()


def _sample_hz(text):
    try:
        hz = int(text)
    except ValueError:
        hz = -1
    if not 0 <= hz <= 100000:
        raise argparse.ArgumentTypeError(f"bad --sample-hz '{text}': give 0 (off) to 100000")
    return hz


def _last_log_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = [l.strip() for l in f if l.strip()]
        return lines[-1] if lines else ""
    except OSError:
        return ""


def hang_detector_flags(args):
    """argusd flags for the flight recorder: snapshots in STATE_DIR/snapshots."""
    if args.no_hang_detector:
        if args.watch_pid or args.watch_comm:
            raise ArgusError("--watch-pid / --watch-comm need the hang detector (drop --no-hang-detector)")
        return []
    if not 0.01 <= args.hang_threshold <= 3600:
        raise ArgusError("--hang-threshold must be between 0.01 and 3600 seconds")
    if not 1 <= args.snapshot_before <= 86400 or args.snapshot_max_count < 1:
        raise ArgusError("--snapshot-before must be 1..86400 seconds and --snapshot-max-count positive")
    for name in args.watch_comm:
        if not name or len(name.encode()) > 15 or any(c.isspace() for c in name):
            raise ArgusError(f"--watch-comm {name!r}: a process name of 1 to 15 bytes, no spaces")
    if any(pid <= 0 for pid in args.watch_pid):
        raise ArgusError("--watch-pid needs a positive process id")
    check_state_dir()
    flags = ["--snapshot-dir", snapshot_dir(), "--hang-threshold-ms", str(max(1, int(args.hang_threshold * 1000))),
             "--snapshot-before-s", str(args.snapshot_before), "--snapshot-max-count", str(args.snapshot_max_count),
             "--snapshot-max-total", str(parse_size(args.snapshot_max_total))]
    for pid in args.watch_pid:
        flags += ["--watch-pid", str(pid)]
    for name in args.watch_comm:
        flags += ["--watch-comm", name]
    return flags


def _detail_flags(args):
    """argusd flags for --detail / --escalate-ms."""
    if not 1 <= args.escalate_ms <= 3_600_000:
        raise ArgusError("--escalate-ms must be 1..3600000")
    if args.detail == "auto" and args.no_hang_detector:
        raise ArgusError("--detail auto needs the hang detector (drop --no-hang-detector)")
    if args.escalate_on == "named" and not (args.watch_pid or args.watch_comm):
        raise ArgusError("--escalate-on named needs --watch-pid or --watch-comm")
    if args.detail == "full":
        return []
    named = ["--escalate-named"] if args.escalate_on == "named" and args.detail == "auto" else []
    return ["--detail", args.detail, "--escalate-ms", str(args.escalate_ms)] + named


def _send_watches(args):
    """A daemon already running: the names to watch go over the control socket."""
    for what, values in (("pid", args.watch_pid), ("comm", args.watch_comm)):
        for v in values:
            reply = control.request(f"watch {what} {v}") or "error: no answer"
            if reply.strip() != "ok":
                raise ArgusError(f"watch {what} {v}: {reply.strip().removeprefix('error: ')}")


def _uprobe_flags(names):
    """argusd flags for --uprobe-hooks: the resolved hook list in RUN_DIR
    (0600), each hook that did not resolve said in one line."""

    if not names:
        return []
    listing, skipped = uprobe_hooks.hook_list(names)
    for line in skipped:
        print(f"argus: {line}")
    if not listing:
        print("argus: no uprobe hook resolved; tracing without them")
        return []
    dir_fd = open_run_dir(create=True)
    try:
        safe_files.write_file(dir_fd, "uprobe-hooks", listing)
    finally:
        os.close(dir_fd)
    return ["--uprobe-hooks", os.path.join(RUN_DIR, "uprobe-hooks")]


def run_start(args):
    flags = (["--no-stacks"] if args.no_stacks else []) + (["--no-syscalls"] if args.no_syscalls else [])
    flags += ["--sample-hz", "0" if args.no_sample else str(args.sample_hz)]
    if args.syscall_probes != "tracepoint":
        flags += ["--syscall-probes", args.syscall_probes]
    flags += hang_detector_flags(args)
    flags += _detail_flags(args)
    flags += _uprobe_flags(args.uprobe_hooks)
    # the goroutines parked before the probes came on: argusd runs this
    # interpreter's argus.tracer.gosnap once per process it probes late
    flags += ["--go-probes", "--go-snapshot", os.path.abspath(sys.executable)] if args.go_probes else []
    flags += ["--cgroup", args.cgroup] if args.cgroup else []
    flags += ["--netns", args.netns] if args.netns else []
    path = os.path.abspath(args.buffer or DEFAULT_BUFFER)
    appending = not args.force and os.path.isfile(path) and os.path.getsize(path) > 0
    buffer, started = start_daemon(args.buffer, args.size, flags, force=args.force)
    st = control.status() or {}
    if started:
        scope = " and ".join(f"{k} {v}" for k, v in (("cgroup", args.cgroup), ("netns", args.netns)) if v)
        print(f"argus: tracing {'only ' + scope if scope else 'system-wide'} into {buffer} "
              f"(daemon pid {st.get('pid', '?')})"
              + ("; appending to the trace it holds" if appending else ""))
    else:
        _send_watches(args)
        print(f"argus: already tracing into {buffer} (daemon pid {st.get('pid', '?')})")
        if args.uprobe_hooks:
            print("argus: --uprobe-hooks takes effect when tracing starts; `argus stop` first to change them")
        if args.cgroup or args.netns:
            print("argus: --cgroup / --netns take effect when tracing starts; `argus stop` first to change the "
                  f"scope (now: {_scope_text(st)})")
    return 0


def _scope_text(st):
    """The running daemon's scope from its status, in words."""
    parts = [f"cgroup {st['scope_cgroup']}" if st.get("scope_cgroup") else "",
             f"netns {st['scope_netns']}" if st.get("scope_netns") else ""]
    return "only " + " and ".join(p for p in parts if p) if any(parts) else "system-wide"


def stop_daemon():
    reply = control.request("stop", timeout=15.0)
    if reply is None:
        return False
    state = read_state()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and os.path.exists(SOCKET_PATH):
        time.sleep(0.05)
    if state is not None:
        remove_state()
    return True


def run_stop(args):
    require_tracing_privileges()
    state = read_state()
    if not stop_daemon():
        raise ArgusError("not tracing")
    buffer = (state or {}).get("buffer", "?")
    print(f"argus: stopped; the trace stays in {buffer}")
    return 0
