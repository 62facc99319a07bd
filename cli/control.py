"""Talking to the tracing daemon over its root-only control socket.

The protocol is one text command per connection ("status", "stop") and one
line back (JSON for status, "ok" for stop).  The socket is talked to only when
it is root's (or the caller's), in a directory nobody else can write.
"""
import json
import os
import socket
import stat

from argus.cli.common import ArgusError, SOCKET_PATH
from argus.tracer import safe_files


def _check_socket(path):
    """Only a socket of root's (or the caller's) in a directory nobody else can
    write is the daemon's: anything else could answer `status` and `stop`
    with lies.  None when there is no socket there (no daemon)."""
    try:
        dir_fd, name = safe_files.open_parent(path)
    except (FileNotFoundError, NotADirectoryError):
        return False
    try:
        st = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return False
    finally:
        os.close(dir_fd)
    if not stat.S_ISSOCK(st.st_mode):
        raise safe_files.UnsafePath(f"refusing {path}: it is not a socket")
    if not safe_files.trusted_uid(st.st_uid):
        raise safe_files.UnsafePath(f"refusing socket {path}: it is owned by uid {st.st_uid} (not root or you)")
    return True


def request(command, path=SOCKET_PATH, timeout=5.0):
    """Send one command; return the reply line, or None when no daemon listens."""
    try:
        if not _check_socket(path):
            return None
    except PermissionError:
        raise ArgusError(f"permission denied on {path}: the control socket is root-only")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(path)
            s.sendall(command.encode() + b"\n")
            chunks = []
            while True:
                data = s.recv(65536)
                if not data:
                    break
                chunks.append(data)
                if data.endswith(b"\n"):
                    break
    except (FileNotFoundError, ConnectionRefusedError):
        return None
    except PermissionError:
        raise ArgusError(f"permission denied on {path}: the control socket is root-only")
    except socket.timeout:
        raise ArgusError(f"the tracing daemon did not answer on {path}")
    return b"".join(chunks).decode(errors="replace").strip()


def status(path=SOCKET_PATH):
    reply = request("status", path)
    if reply is None:
        return None
    try:
        return json.loads(reply)
    except ValueError:
        raise ArgusError(f"unexpected status reply from the daemon: {reply[:80]!r}")
