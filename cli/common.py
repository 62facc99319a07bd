"""Shared pieces of the command-line tools: errors, paths, privilege checks.

Every user-facing failure is an ArgusError carrying one line; main() prints
it as `argus: <line>` and exits non-zero.  Nothing here ever prints a traceback
for bad input.
"""
import json
import os
import re
import sys
import shutil

from argus.tracer import safe_files
from argus.tracer.errors import ArgusError
import argus

RUN_DIR = os.environ.get("ARGUS_RUN_DIR", "/run/argus")
STATE_DIR = os.environ.get("ARGUS_STATE_DIR", "/var/lib/argus")
DEFAULT_BUFFER = os.path.join(STATE_DIR, "trace.argus")
SOCKET_PATH = os.path.join(RUN_DIR, "argusd.sock")
STATE_FILE = os.path.join(RUN_DIR, "state.json")
# The buffer the last `argus start` traced into: after `argus stop` the readers
# (status, events, debug, hangs) default to it, not to DEFAULT_BUFFER.
LAST_BUFFER_FILE = os.path.join(STATE_DIR, "last-buffer.json")




def native_path(name):
    """Path of a native part (argusd, libargus_core.so, demo programs)."""
    path = os.path.join(argus.NATIVE_DIR, name)
    if not os.path.exists(path):
        raise ArgusError(f"missing native part {path}: reinstall Argus with `pip install .`")
    return path


def require_tracing_privileges():
    """Tracing needs root (or CAP_BPF + CAP_PERFMON) and a kernel with BTF."""
    if os.geteuid() != 0 and not _has_bpf_caps():
        raise ArgusError("tracing needs root (or CAP_BPF and CAP_PERFMON): run with sudo")
    if sys.platform.startswith("linux") and not os.path.exists("/sys/kernel/btf/vmlinux"):
        raise ArgusError("this kernel has no BTF (/sys/kernel/btf/vmlinux): eBPF tracing is unavailable")


def _has_bpf_caps():
    cap_bpf, cap_perfmon = 39, 38
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("CapEff:"):
                    eff = int(line.split()[1], 16)
                    return bool(eff & (1 << cap_bpf)) and bool(eff & (1 << cap_perfmon))
    except OSError:
        pass
    return False


def open_run_dir(create=False, directory=None):
    """A verified fd of RUN_DIR (argus.tracer.safe_files.open_dir: a real
    directory of root's or the caller's that nobody else can write), or None
    when it does not exist.  A directory someone else prepared (ARGUS_RUN_DIR
    pointing into a shared place) is refused with one line: a link planted at
    state.json or argusd.log there would make root overwrite or chmod a file."""
    directory = directory or RUN_DIR
    try:
        return safe_files.open_dir(directory, create=create)
    except FileNotFoundError:
        return None
    except PermissionError:
        if not create:
            return None          # not root: no daemon state to see (the directory is root's, 0700)
        raise ArgusError(f"cannot open {directory}: permission denied (run as root)") from None
    except OSError as e:
        raise ArgusError(f"cannot open {directory}: {e.strerror}") from None


def _read_json(path):
    """The JSON object in `path`, read through its verified directory (never
    a link, never from a directory others can write), or None."""
    fd = open_run_dir(directory=os.path.dirname(path))
    if fd is None:
        return None
    try:
        return json.loads(safe_files.read_text(fd, os.path.basename(path), shown=path))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def _write_json(path, obj):
    """Writes `obj` to `path` as a new 0600 file renamed into place, through
    its verified directory (created 0700 when missing)."""
    fd = open_run_dir(create=True, directory=os.path.dirname(path))
    try:
        safe_files.write_file(fd, os.path.basename(path), json.dumps(obj))
    finally:
        os.close(fd)


def read_state():
    """The running daemon's state (buffer path, pid), or None."""
    return _read_json(STATE_FILE)


def write_state(state):
    """Writes state.json in RUN_DIR."""
    _write_json(STATE_FILE, state)


def remove_state():
    fd = open_run_dir(directory=os.path.dirname(STATE_FILE))
    if fd is None:
        return
    try:
        os.unlink(os.path.basename(STATE_FILE), dir_fd=fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remember_buffer(path):
    """Record `path` as the last buffer traced into (LAST_BUFFER_FILE in
    STATE_DIR, 0600; a link planted at the name is replaced, never followed)."""
    try:
        _write_json(LAST_BUFFER_FILE, {"buffer": os.path.abspath(path)})
    except (OSError, ArgusError) as e:
        print(f"argus: warning: cannot remember the buffer in {LAST_BUFFER_FILE}: {(e.strerror if isinstance(e, OSError) else None) or e}",
              file=sys.stderr)


def last_buffer():
    """The buffer remember_buffer recorded, or None."""
    try:
        state = _read_json(LAST_BUFFER_FILE)
    except ArgusError:
        return None
    path = state.get("buffer") if isinstance(state, dict) else None
    return path if isinstance(path, str) and path else None


def resolve_buffer(explicit, announce=True):
    """--buffer if given, else the running daemon's buffer, else the last
    buffer traced into, else the default path.  announce: say on stderr which
    buffer an implicit choice reads (the user did not name it)."""
    if explicit:
        return explicit
    state = read_state()
    if state and state.get("buffer"):
        path, why = state["buffer"], "the active buffer"
    else:
        path, why = last_buffer(), "the last buffer traced into"
        if path is None:
            path, why = DEFAULT_BUFFER, "the default buffer"
    if announce:
        print(f"argus: reading {path} ({why}; --buffer FILE reads another)", file=sys.stderr)
    return path


def parse_size(text):
    """'2G', '512M', '64KiB' or plain bytes -> bytes."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", str(text).lower())
    if not m:
        raise ArgusError(f"bad size {text!r}: use bytes or a suffix K, M, G")
    value = int(float(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[m.group(2)])
    if value < (4 << 20):
        raise ArgusError(f"size {text} is too small: the ring buffer needs at least 4M")
    return value


def free_disk_bytes(path):
    directory = os.path.dirname(os.path.abspath(path)) or "."
    return shutil.disk_usage(directory).free
