"""`argus collect` against a real OpenSSH server on localhost.

A private sshd (its own host key, config and authorized key, on a free
port of 127.0.0.1) serves root@127.0.0.1; argus collect copies a live
buffer of a real argusd through it, then stops that daemon and copies
again (--stop).  Skips when sshd is not installed (apt install
openssh-server)."""
import os
import shutil
import socket
import subprocess
import sys
import time

import pytest

from conftest import ArgusRunner, require_tracing
from argus.tracer import reader

SSHD = "/usr/sbin/sshd"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def sshd(tmp_path):
    if os.geteuid() != 0 or not os.path.exists(SSHD) or not shutil.which("ssh") or not shutil.which("ssh-keygen"):
        pytest.skip("needs root, sshd and ssh (apt install openssh-server)")
    d = tmp_path / "ssh"
    d.mkdir(mode=0o700)
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / name)], check=True)
    (d / "authorized_keys").write_text((d / "client_key.pub").read_text())
    os.chmod(d / "authorized_keys", 0o600)
    port = _free_port()
    (d / "sshd_config").write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d / 'host_key'}\nAuthorizedKeysFile {d / 'authorized_keys'}\n"
        f"PermitRootLogin prohibit-password\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        f"UsePAM no\nPidFile {d / 'sshd.pid'}\nStrictModes no\n")
    os.makedirs("/run/sshd", exist_ok=True)          # privilege separation directory
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(d / "sshd_config")], stderr=subprocess.PIPE, text=True)
    opts = [f"Port={port}", f"IdentityFile={d / 'client_key'}", "IdentitiesOnly=yes",
            f"UserKnownHostsFile={d / 'known_hosts'}", "StrictHostKeyChecking=accept-new"]
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ok = subprocess.run(["ssh", *sum((["-o", o] for o in opts), []), "-o", "BatchMode=yes",
                                 "root@127.0.0.1", "true"], capture_output=True)
            if ok.returncode == 0:
                break
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.3)
        else:
            pytest.fail("the private sshd never accepted the key")
        yield opts
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_collect_a_live_buffer_then_a_stopped_one(sshd, tmp_path):
    require_tracing()
    runner = ArgusRunner(tmp_path / "argus")
    runner.start(size="64M")
    out = tmp_path / "out"
    out.mkdir()
    remote = (f"env ARGUS_RUN_DIR={runner.env['ARGUS_RUN_DIR']} ARGUS_STATE_DIR={runner.env['ARGUS_STATE_DIR']} "
              f"{sys.executable} -m argus.cli")
    opts = sum((["-O", o] for o in sshd), [])
    try:
        subprocess.run(["sh", "-c", "for i in 1 2 3 4 5; do sleep 0.05; done"], check=True)
        live = runner.run("collect", f"root@127.0.0.1:{runner.buffer}", "-o", str(out), "--remote-argus", remote,
                          *opts)
        copy = out / f"127.0.0.1-{os.path.basename(runner.buffer)}"
        assert live.stdout.strip() == f"--buffer {copy}"
        assert "events, host" in live.stderr
        t = reader.decode_file(str(copy), strict=False)
        assert t.nrows > 0 and t.hostname == socket.gethostname()
        assert copy.stat().st_size < 64 << 20              # only the used chunks travel
        assert oct(copy.stat().st_mode & 0o777) == "0o600"

        stopped = runner.run("collect", f"root@127.0.0.1:{runner.buffer}", "-o", str(out / ".."), "--stop",
                             "--remote-argus", remote, *opts)
        assert stopped.returncode == 0
        assert "not tracing" in runner.run("status", check=False).stdout       # --stop stopped it
        again = tmp_path / copy.name
        src, dst = reader.decode_file(runner.buffer), reader.decode_file(str(again))
        assert dst.nrows == src.nrows and (dst.rows["ts_ns"] == src.rows["ts_ns"]).all()
    finally:
        runner.stop()

    bad = runner.run("collect", "root@127.0.0.1:/nonexistent.argus", "-o", str(out), "--remote-argus", remote, *opts,
                     check=False)
    assert bad.returncode != 0 and bad.stderr.count("\n") == 1 and "cannot open /nonexistent.argus" in bad.stderr
    assert not (out / "127.0.0.1-nonexistent.argus").exists()
    unparsable = runner.run("collect", "no-path-here", check=False)
    assert unparsable.returncode != 0 and "HOST:BUFFER" in unparsable.stderr
