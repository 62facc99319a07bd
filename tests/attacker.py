"""A second, unprivileged user for the shared-directory tests (issue 16).

The tests run as root; the attacker's steps run as ATTACKER (created with
useradd when absent) in a forked child that drops to that uid, in a
directory like /tmp: owned by root, mode 1777.
"""
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
import traceback

import pytest

ATTACKER = "argus-attacker"


def require_root():
    if os.geteuid() != 0:
        pytest.skip("needs root (and useradd) to act as a second user")


def attacker_ids():
    require_root()
    try:
        pw = pwd.getpwnam(ATTACKER)
    except KeyError:
        # another test may create it at the same time: check again after
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", ATTACKER],
                       capture_output=True)
        pw = pwd.getpwnam(ATTACKER)
    return pw.pw_uid, pw.pw_gid


def spawn_as_attacker(fn, *args):
    """Starts fn(*args) as the attacker in a forked child; its pid (wait for
    it with waitpid: exit code 0 when fn returned)."""
    uid, gid = attacker_ids()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            os.umask(0)
            fn(*args)
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    return pid


def as_attacker(fn, *args):
    """Runs fn(*args) as the attacker in a forked child; asserts it succeeded."""
    _, status = os.waitpid(spawn_as_attacker(fn, *args), 0)
    assert os.waitstatus_to_exitcode(status) == 0, f"the attacker's step {fn.__name__} failed"


@pytest.fixture
def shared_dir():
    """A /tmp-like directory: root's, mode 1777 (anyone may add entries)."""
    d = tempfile.mkdtemp(prefix="argus-shared-", dir="/tmp")
    os.chmod(d, 0o1777)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def fingerprint(path):
    """What must not change: content, mode, owner (of the file a link points to)."""
    st = os.stat(path)
    with open(path, "rb") as f:
        return f.read(), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid


def victim(tmp_path, name="precious.conf"):
    """A root-owned file in a root-only directory: what an attack would change."""
    p = tmp_path / name
    p.write_bytes(b"root-only content\n")
    os.chmod(p, 0o640)
    return str(p)
