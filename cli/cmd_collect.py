"""`argus collect HOST:BUFFER ...`: bring the buffers of several hosts here
over ssh, for `argus debug --buffer A --buffer B ...` (docs/multi-host.md).

Each host runs `argus buffer-copy BUFFER` over OpenSSH (no server of our
own: the fleet's sshd, keys and known_hosts), which writes a consistent,
compact copy of the buffer to its stdout (tracer/rbcopy.py: a live buffer
is read between two reads of its chunk table, a chunk a writer took over
meanwhile is left out; only the used chunks travel).  With --stop the
remote daemon is stopped first (`argus stop`: the buffer stays readable
and nothing changes under the copy).  The copy lands in DIR as
HOST-BUFFERNAME through the one safe writer, with a progress line on
stderr; a failed transfer leaves no file.
"""
import os
import re
import shlex
import subprocess
import sys
import time

from argus.cli.common import ArgusError
from argus.tracer import rbcopy, reader, safe_files
from argus.tracer.textsafe import safe_lines

BLOCK = 1 << 20
HEADER_PREFIX = 32          # magic .. file_size (at 24)


def register(sub):
    p = sub.add_parser("collect", help="copy the buffers of other hosts here over ssh (docs/multi-host.md)")
    p.add_argument("sources", nargs="+", metavar="HOST:BUFFER",
                   help="[user@]host and the buffer's path on it (host may be [IPv6])")
    p.add_argument("-o", "--output", default=".", metavar="DIR", help="where the copies go (default: here)")
    p.add_argument("--stop", action="store_true", help="stop the remote daemon first (argus stop there)")
    p.add_argument("--ssh", default="ssh", metavar="CMD", help="the ssh client (default ssh: OpenSSH)")
    p.add_argument("-O", "--ssh-option", action="append", default=[], metavar="OPT",
                   help="an ssh -o option (e.g. Port=2222), repeatable")
    p.add_argument("--remote-argus", default="argus", metavar="CMD",
                   help="how to run argus on the hosts (default argus; e.g. 'sudo argus')")
    p.set_defaults(func=run_collect)

    p = sub.add_parser("buffer-copy", help="write a consistent, compact copy of a buffer to stdout "
                                           "(what argus collect runs on each host)")
    p.add_argument("buffer", help="the buffer (live or not)")
    p.set_defaults(func=run_buffer_copy)


def run_buffer_copy(args):
    if sys.stdout.isatty():
        raise ArgusError("buffer-copy writes the buffer to stdout: redirect it to a file or a pipe")
    out = sys.stdout.buffer
    try:
        size, kept, dropped = rbcopy.copy(args.buffer, out.write)
        out.flush()
    except rbcopy.CopyError as e:
        raise ArgusError(str(e))
    if dropped:
        print(f"argus: {args.buffer}: {dropped} chunk(s) a writer took over while they were read were left out",
              file=sys.stderr)
    return 0


SOURCE_RE = re.compile(r"^(?P<host>\[[^\]]+\]|[^:\[\]]+):(?P<path>.+)$")


def parse_source(text):
    m = SOURCE_RE.match(text)
    if not m:
        raise ArgusError(f"{text!r}: expected HOST:BUFFER (e.g. db1:/var/lib/argus/trace.argus)")
    return m.group("host").strip("[]"), m.group("path")


def local_name(host, path):
    """HOST-BUFFERNAME with anything but [A-Za-z0-9._-] replaced."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", f"{host.rpartition('@')[2]}-{os.path.basename(path)}")


def ssh_command(args, host, remote):
    """The ssh argv running `remote` (a shell command line) on host."""
    cmd = [args.ssh, "-C", "-o", "BatchMode=yes"]
    for opt in args.ssh_option:
        cmd += ["-o", opt]
    return cmd + ["--", host, remote]


def _remote(args, *words):
    return " ".join([args.remote_argus] + [shlex.quote(w) for w in words])


def _say(line, end="\n"):
    print(safe_lines(line), end=end, file=sys.stderr, flush=True)


def _fetch(args, host, path, dest):
    cmd = ssh_command(args, host, _remote(args, "buffer-copy", path))
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        raise ArgusError(f"cannot run {args.ssh}: {e.strerror}")
    tty = sys.stderr.isatty()
    got, total, t0, prefix = 0, 0, time.monotonic(), b""
    try:
        with safe_files.output_file(dest) as f:
            while True:
                block = proc.stdout.read(BLOCK)
                if not block:
                    break
                if len(prefix) < HEADER_PREFIX:
                    prefix += block[:HEADER_PREFIX - len(prefix)]
                    if len(prefix) >= 32 and prefix[:8] == b"ARGUSRB\0":
                        total = int.from_bytes(prefix[24:32], "little")     # the header's file_size
                f.write(block)
                got += len(block)
                if tty:
                    share = f" of {total / 2**20:.1f} MiB ({100 * got // max(total, 1)}%)" if total else ""
                    _say(f"\rargus: {host}: {got / 2**20:.1f} MiB{share}", end="")
            err = proc.stderr.read().decode(errors="replace")
            rc = proc.wait()
            if rc != 0 or got == 0:
                why = (err.strip().splitlines() or [f"exit status {rc}"])[-1]
                raise ArgusError(f"{host}:{path}: {why}")
            if total and got != total:
                raise ArgusError(f"{host}:{path}: the copy ended after {got} of {total} bytes")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if tty:
            _say("\r", end="")
    for line in err.strip().splitlines():
        _say(f"argus: {host}: {line.removeprefix('argus: ')}")
    return got, time.monotonic() - t0


def run_collect(args):
    sources = [parse_source(s) for s in args.sources]
    if not os.path.isdir(args.output):
        raise ArgusError(f"{args.output}: no such directory")
    names = [local_name(h, p) for h, p in sources]
    if len(set(names)) != len(names):
        raise ArgusError("two sources would be copied to the same name: " + ", ".join(sorted(
            n for n in set(names) if names.count(n) > 1)))
    written = []
    for (host, path), name in zip(sources, names):
        if args.stop:
            proc = subprocess.run(ssh_command(args, host, _remote(args, "stop")), capture_output=True, text=True)
            if proc.returncode != 0:
                why = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
                raise ArgusError(f"{host}: argus stop failed: {why}")
        dest = os.path.join(args.output, name)
        got, secs = _fetch(args, host, path, dest)
        try:
            st = reader.buffer_stats(dest)
        except reader.TraceError as e:
            raise ArgusError(f"{host}:{path}: the copy is not readable: {e}")
        who = st.get("hostname") or "no hostname in its header"
        _say(f"argus: {host}:{path} -> {dest}: {got / 2**20:.1f} MiB in {secs:.1f} s, "
             f"{reader.event_counts(st)['present']:,} events, host {who}")
        written.append(dest)
    print(" ".join(f"--buffer {shlex.quote(p)}" for p in written))
    return 0


