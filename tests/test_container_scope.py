"""End to end: `argus start --cgroup PATH` on a real container (issue 27).

A podman container (a busybox image imported from a tarball, no registry;
its own storage, run and state directories in a private temporary
directory; the cgroupfs manager and runc, see Podman) runs `sh`, which waits for a "go" line on one FIFO, then
forks `cat` on a second FIFO and blocks in its read until the test process,
on the host, writes a byte a second later.  Both FIFOs are bind-mounted from
the host.  argusd records only the container's cgroup (found from the
container's pid, /proc/PID/cgroup: its cgroup v2 path) while a busy host
process runs beside it as noise.

Checked from the trace (`argus events --json`, `argus hangs --json`): every
process recorded lives in the container's cgroup, and the container's `sh`
and `cat` are among them; the noise and the test process appear at most as the
outside end of a wakeup, and the wakeup of `cat` by the test process (the
write crossing the boundary) is there; the PROC_NS records and the hang of
`cat` name the container `podman:<id[:12]>`.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

import pytest
from elftools.elf.elffile import ELFFile

from conftest import require_tracing
from support.cgroups import cgroup2_root
from support.polling import wait_until

IMAGE = "localhost/argus-busybox:test"
APPLETS = ("sh", "cat", "echo")
# the container's program: its pid 1 (sh) forks cat, which blocks reading
SCRIPT = "read go < /x/go; cat /x/in > /x/out; echo done > /x/done"
# the host-only noise: a busy process with its own wakeups
NOISE = ("import os, time\nr, w = os.pipe()\nend = time.monotonic() + 3\n"
         "while time.monotonic() < end:\n    os.write(w, b'n'); os.read(r, 1); time.sleep(0.002)\n")
# podman raises the container's open-file and process limits to its own
# defaults, which needs CAP_SYS_RESOURCE (a sandbox's root may lack it):
# modest limits below any hard limit instead
LIMITS = ("--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024")
# the records whose header pid may be outside the scope (test_scope.py)
CROSSING = ("wakeup", "wakeup_new", "timer", "lost")


def busybox():
    """A static busybox: the image holds nothing else, no libc."""
    path = shutil.which("busybox")
    assert path, "busybox not found: scripts/setup.sh installs busybox-static (the image is built from it)"
    with open(path, "rb") as f:
        interp = any(s["p_type"] == "PT_INTERP" for s in ELFFile(f).iter_segments())
    assert not interp, f"{path} is dynamically linked: install busybox-static"
    return path


class Podman:
    """podman with a private store (root, runroot, tmpdir), the cgroupfs
    manager (PID 1 need not be systemd), file events (no journald) and runc.

    runc, not crun: on a hybrid host (v1 controllers, cgroup2 mounted beside
    them at /sys/fs/cgroup/unified) runc puts the container in the v2 tree
    too, which --cgroup keys on; crun 1.8 refuses such a host outright when
    any controller sits on cgroup2 ("cgroups in hybrid mode not supported,
    drop all controllers from cgroupv2"), and on a pure v2 host both do."""

    def __init__(self, base):
        self.base = base
        self.flags = ["--root", str(base / "root"), "--runroot", str(base / "runroot"), "--tmpdir",
                      str(base / "libpod"), "--storage-driver", "vfs", "--cgroup-manager", "cgroupfs",
                      "--events-backend", "file", "--runtime", "runc"]

    def __call__(self, *args, check=True, timeout=120):
        proc = subprocess.run(["podman", *self.flags, *args], capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"podman {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
        return proc.stdout.strip()

    def import_busybox(self):
        rootfs = self.base / "rootfs.tar"
        with tarfile.open(rootfs, "w") as tar:
            tar.add(busybox(), "bin/busybox")
            for name in APPLETS:
                link = tarfile.TarInfo(f"bin/{name}")
                link.type, link.linkname = tarfile.SYMTYPE, "busybox"
                tar.addfile(link)
            d = tarfile.TarInfo("x")
            d.type, d.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(d)
        self("import", str(rootfs), IMAGE)


@pytest.fixture
def podman():
    require_tracing()
    if not shutil.which("podman"):
        pytest.skip("podman not installed (scripts/setup.sh installs it)")
    # not below tmp_path: podman refuses a runroot path over 50 characters
    base = pathlib.Path(tempfile.mkdtemp(prefix="argus-pm-"))
    try:
        p = Podman(base)
        p.import_busybox()
        yield p
        p("rm", "--all", "--force", "--time", "0", check=False)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def v2_cgroup(pid):
    with open(f"/proc/{pid}/cgroup") as f:
        return next((ln[3:].strip() for ln in f if ln.startswith("0::")), "")


def v1_cgroup_dir(pid):
    """The directory of pid's cgroup in a mounted v1 hierarchy, "" on a host
    without one."""
    mounts = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fstype, _, opts = right.split()[:3]
            if fstype == "cgroup":
                for opt in opts.split(","):
                    mounts[opt] = left.split()[4]
    with open(f"/proc/{pid}/cgroup") as f:
        for line in f:
            _, names, path = line.rstrip("\n").split(":", 2)
            for name in names.split(","):
                if name in mounts and path != "/":
                    return os.path.join(mounts[name], path.lstrip("/"))
    return ""


def cgroup_pids(path, root):
    with open(os.path.join(root, path.lstrip("/"), "cgroup.procs")) as f:
        return {int(x) for x in f.read().split()}


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def state(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return ""


def test_cgroup_scope_records_one_podman_container(tmp_path, podman, argus_daemons):
    x = tmp_path / "x"
    x.mkdir()
    for name in ("go", "in"):
        os.mkfifo(x / name)
    cid = podman("run", "-d", "--network", "none", *LIMITS, "-v", f"{x}:/x", IMAGE, "sh", "-c", SCRIPT)
    sh_pid = int(podman("inspect", "--format", "{{.State.Pid}}", cid))
    cgroup = v2_cgroup(sh_pid)
    root = cgroup2_root()
    assert root, "no cgroup v2 file system mounted: --cgroup needs one"
    assert cgroup not in ("", "/"), \
        f"the runtime left the container in the cgroup v2 root (hybrid host, runtime not joining the unified " \
        f"hierarchy?): {open(f'/proc/{sh_pid}/cgroup').read()}"

    runner = argus_daemons(tmp_path / "argus")
    v1 = v1_cgroup_dir(sh_pid)
    if v1:      # a hybrid host: the container's v1 directory is refused in one line, naming the v2 path
        proc = runner.run("start", "--buffer", runner.buffer, "--size", "128M", "--cgroup", v1, check=False)
        assert proc.returncode != 0 and "a cgroup v1 directory; give the cgroup v2 path" in proc.stderr \
            and "Traceback" not in proc.stderr, proc.stderr
    runner.run("start", "--buffer", runner.buffer, "--size", "128M", "--no-hang-detector", "--cgroup", cgroup)
    noise = subprocess.Popen([sys.executable, "-c", NOISE])
    writer = os.open(x / "in", os.O_RDWR)      # a writer already: cat's open does not wait, its read does
    try:
        with open(x / "go", "w") as f:
            f.write("go\n")
        cat_pid = wait_until(lambda: next(
            (p for p in cgroup_pids(cgroup, root) if comm(p) == "cat" and state(p) == "S"), None), 30)
        assert cat_pid, "timed out waiting for cat in the container"
        time.sleep(1.0)                        # cat is blocked in read: the host writes late
        os.write(writer, b"x")
    finally:
        os.close(writer)                       # cat reads EOF next and exits
    podman("wait", cid, timeout=60)
    noise.wait(timeout=60)
    assert (x / "out").read_text() == "x" and (x / "done").read_text() == "done\n"
    runner.wait_drained()
    runner.ensure_stopped()

    events = [json.loads(ln) for ln in runner.run("events", "--buffer", runner.buffer, "--json").stdout.splitlines()]
    own = {e["pid"] for e in events if e["type"] not in CROSSING}
    scopes = {e["pid"]: e for e in events if e["type"] == "proc_ns"}
    inside = {p for p in own if scopes.get(p, {}).get("cgroup", "").startswith(cgroup)}
    me = os.getpid()
    print(f"container {cid[:12]} in {cgroup}: {len(own)} processes recorded, {len(inside)} in its cgroup "
          f"({sorted(inside)}), {len(own - inside)} outside ({sorted(own - inside)}); v1 directory refused: {v1 or '-'}")
    assert {sh_pid, cat_pid} <= own, f"the container's sh {sh_pid} and cat {cat_pid} missing from {sorted(own)}"
    assert noise.pid not in own and me not in own, f"host processes recorded: {sorted(own & {noise.pid, me})}"
    assert own == inside, f"processes outside the container's cgroup recorded: {sorted(own - inside)}"
    wakes = {(e["pid"], e["wakee_pid"]) for e in events if e["type"] in ("wakeup", "wakeup_new")}
    assert (me, cat_pid) in wakes, "the host's write waking cat in the container is missing"
    assert all(a in own or b in own for a, b in wakes), "a wakeup with no end inside was recorded"
    name = f"podman:{cid[:12]}"
    assert {scopes[p]["container"] for p in (sh_pid, cat_pid)} == {name}, [scopes[p] for p in (sh_pid, cat_pid)]

    hangs = runner.json("hangs", "--buffer", runner.buffer, "--pid", str(cat_pid), "--threshold", "0.5", "--json")
    assert hangs["hangs"] and all(h.get("container") == name for h in hangs["hangs"]), hangs["hangs"]
