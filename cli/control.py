"""Talking to the tracing daemon over its root-only control socket.

The protocol is one text command per connection ("status", "stop") and one
line back (JSON for status, "ok" for stop).
"""
import json
import socket

from argus.cli.common import ArgusError, SOCKET_PATH


def request(command, path=SOCKET_PATH, timeout=5.0):
    """Send one command; return the reply line, or None when no daemon listens."""
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
