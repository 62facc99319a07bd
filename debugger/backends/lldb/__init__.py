"""The lldb backend: the one place in Argus that imports lldb.

How lldb's Python module is found (docs/lldb.md):
  Linux   PyPI's `lldb-for-pwndbg` wheel (pip install argus[lldb], which
          scripts/setup.sh runs) puts an `lldb` package with lldb 23 on
          sys.path and an lldb-server in lldb_for_pwndbg/_vendor/bin.  lldb
          on Linux debugs through lldb-server and finds it through
          LLDB_DEBUGSERVER_PATH, which find_lldb() sets when unset.
          Debian's python3-lldb-14 ships a broken _lldb link: not used.
  macOS   Xcode's lldb: `lldb -P` prints the directory holding its module;
          find_lldb() adds it to sys.path when `import lldb` fails.
"""
import os
import shutil
import subprocess
import sys

from argus.debugger.base import DebuggerError

_lldb = None


def server_path():
    """The lldb-server shipped with lldb-for-pwndbg, or None."""
    try:
        import lldb_for_pwndbg
    except ImportError:
        return None
    path = os.path.join(os.path.dirname(lldb_for_pwndbg.__file__), "_vendor", "bin", "lldb-server")
    return path if os.access(path, os.X_OK) else None


def find_lldb():
    """Import and return lldb's Python module, or raise DebuggerError (one line)."""
    global _lldb
    if _lldb is not None:
        return _lldb
    if sys.platform.startswith("linux") and not os.environ.get("LLDB_DEBUGSERVER_PATH"):
        srv = server_path()
        if srv:
            os.environ["LLDB_DEBUGSERVER_PATH"] = srv
    try:
        import lldb
    except ImportError:
        lldb = None
        exe = shutil.which("lldb")
        if exe and sys.platform == "darwin":
            try:
                where = subprocess.run([exe, "-P"], capture_output=True, text=True, timeout=30).stdout.strip()
            except (OSError, subprocess.SubprocessError):
                where = ""
            if where:
                sys.path.append(where)
                try:
                    import lldb
                except ImportError:
                    lldb = None
        if lldb is None:
            raise DebuggerError("lldb's Python module is not installed: pip install 'argus[lldb]' "
                                "(lldb-for-pwndbg), or on macOS install Xcode's command line tools") from None
    _lldb = lldb
    return lldb


def env_for_scripts():
    """Environment for running a generated lldb script with this Python."""
    env = dict(os.environ)
    srv = server_path()
    if srv and not env.get("LLDB_DEBUGSERVER_PATH"):
        env["LLDB_DEBUGSERVER_PATH"] = srv
    return env
