import numpy as np
import pytest

from . import containers, schema

D = "0123456789abcdef" * 4      # a 64-hex container id


@pytest.mark.parametrize("path, name", [
    (f"/system.slice/docker-{D}.scope", "docker:0123456789ab"),
    (f"/docker/{D}", "docker:0123456789ab"),
    (f"/machine.slice/libpod-{D}.scope", "podman:0123456789ab"),
    (f"/machine.slice/libpod-{D}.scope/container", "podman:0123456789ab"),
    (f"/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-conmon-{D}.scope", "podman:0123456789ab"),
    (f"/libpod_parent/libpod-{D}", "podman:0123456789ab"),             # the cgroupfs manager
    (f"/libpod_parent/libpod-{D}/container", "podman:0123456789ab"),
    ("/libpod_parent/conmon", ""),                                      # conmon of every container at once
    ("/libpod_parent/libpod-not-an-id", ""),
    (f"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/cri-containerd-{D}.scope",
     "containerd:0123456789ab"),
    (f"/kubepods/burstable/pod6b1c2d3e-aaaa-bbbb-cccc-0123456789ab/{D}", "containerd:0123456789ab"),
    (f"/kubepods.slice/kubepods-pod1.slice/crio-{D}.scope", "cri-o:0123456789ab"),
    ("/system.slice/nginx.service", "nginx.service"),
    ("/user.slice/user-1000.slice/session-3.scope", "session-3.scope"),
    ("/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", "foo.service"),
    ("/system.slice/run-r5c1e.scope", "run-r5c1e.scope"),
    ("/init.scope", "init.scope"),
    ("/user.slice", ""),
    ("/", ""),
    ("", ""),
    ("/argus-test/a", ""),
    ("/docker/not-an-id", ""),
])
def test_container_name(path, name):
    assert containers.container_name(path) == name


def proc_ns_row(ts, pid, cgroup_id, netns, off, length):
    r = np.zeros(1, schema.ROW_DTYPE)[0]
    r["ts_ns"], r["pid"], r["tid"], r["type"] = ts, pid, pid, schema.PROC_NS
    r[schema.column(schema.PROC_NS, "cgroup_id")] = cgroup_id
    r[schema.column(schema.PROC_NS, "netns_ino")] = netns
    r[schema.column(schema.PROC_NS, "path")] = off
    r[schema.column(schema.PROC_NS, "path_len")] = length
    return r


def test_process_scopes_keeps_the_last_record_and_fills_a_missing_path():
    strings = b"/system.slice/a.service\0/b\0\0"
    rows = np.array([proc_ns_row(1, 10, 5, 400, 0, 23), proc_ns_row(2, 10, 6, 401, 24, 2),
                     proc_ns_row(3, 11, 5, 400, 27, 0), proc_ns_row(4, 10, 0, 0, 27, 0)], schema.ROW_DTYPE)
    got = containers.process_scopes(rows, strings)
    assert got == {10: {"cgroup_id": 6, "cgroup": "/b", "netns": 401, "container": ""},
                   11: {"cgroup_id": 5, "cgroup": "/system.slice/a.service", "netns": 400,
                        "container": "a.service"}}
    assert containers.describe(got[11]) == "a.service netns 400"
    assert containers.describe(got[10]) == "/b netns 401"
    assert containers.describe({}) == ""
    assert containers.describe({"cgroup": "/", "netns": 7}) == "netns 7"
    assert containers.describe({"cgroup": "/", "netns": 7}, netns=False) == ""


def test_live_scope_reads_proc_for_the_process_the_trace_saw():
    import os
    import time
    me, comm = os.getpid(), open("/proc/self/comm").read().strip()
    scope = containers.live_scope(me, comm, time.monotonic_ns())
    assert scope["netns"] == os.stat("/proc/self/ns/net").st_ino
    assert scope.get("cgroup", "/") in {ln[3:] for ln in open("/proc/self/cgroup").read().splitlines()
                                         if ln.startswith("0::")} | {"/"}
    assert containers.live_scope(me, comm + "x", time.monotonic_ns()) == {}     # another program
    assert containers.live_scope(me, comm, 0) == {}                             # started after the time
    assert containers.live_scope(2 ** 31, comm, time.monotonic_ns()) == {}      # gone
