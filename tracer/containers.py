"""Where processes live: cgroup, network namespace and container name.

PROC_NS records (tracer/ringbuf/argus_event.h) carry a process's cgroup v2
id and path and its network namespace inode; they are written at start-up,
exec, fork and cgroup moves.  container_name() reads a runtime's name from
the cgroup path, by the layouts the runtimes and systemd use:

    .../docker-<id>.scope, /docker/<id>             docker:<id[:12]>
    .../libpod-<id>.scope, libpod-conmon-<id>.scope  podman:<id[:12]>
    /libpod_parent/libpod-<id> (cgroupfs manager)    podman:<id[:12]>
    .../cri-containerd-<id>.scope, /kubepods/.../<id>  containerd:<id[:12]>
    .../crio-<id>.scope                              cri-o:<id[:12]>
    .../NAME.service, .../session-N.scope, X.scope  the unit (the innermost)
"""
import os
import re
import time

from . import schema

_ID = r"([0-9a-f]{12,64})"
# (pattern on one path component, runtime); the innermost match wins
_RUNTIMES = (
    (re.compile(rf"^docker-{_ID}\.scope$"), "docker"),
    # podman's systemd manager makes scopes; its cgroupfs manager (hosts
    # without systemd as PID 1) plain directories of the same name
    (re.compile(rf"^libpod-(?:conmon-)?{_ID}(?:\.scope)?$"), "podman"),
    (re.compile(rf"^cri-containerd-{_ID}\.scope$"), "containerd"),
    (re.compile(rf"^crio-(?:conmon-)?{_ID}\.scope$"), "cri-o"),
)
_UNIT = re.compile(r"^[^/]+\.(service|scope)$")


def container_name(path):
    """The container (runtime:short id) or systemd unit a cgroup path shows,
    or "" for none (the root, a plain directory, slices only)."""
    parts = [p for p in (path or "").split("/") if p]
    for i in range(len(parts) - 1, -1, -1):
        part = parts[i]
        for pattern, runtime in _RUNTIMES:
            m = pattern.match(part)
            if m:
                return f"{runtime}:{m.group(1)[:12]}"
        parent = parts[i - 1] if i else ""
        # cgroupfs drivers: /docker/<id>, /kubepods/<qos>/pod<uid>/<id>
        if re.fullmatch(_ID, part) and len(part) == 64:
            if parent == "docker":
                return f"docker:{part[:12]}"
            if parent.startswith("pod") or "kubepods" in parts[:i]:
                return f"containerd:{part[:12]}"
    for part in reversed(parts):
        if _UNIT.match(part):
            return part
    return ""


def process_scopes(rows, strings):
    """{pid: {"cgroup_id", "cgroup", "netns", "container"}} from the PROC_NS
    rows, the last one of each process (rows are time-sorted).  A record
    whose path argusd could not read keeps the last path of the same id."""
    out = {}
    sel = rows[rows["type"] == schema.PROC_NS]
    paths = {}
    for r in sel:
        cg = int(r["obj"])
        if not cg and not int(r["obj2"]):
            continue            # nothing known (a task that had dropped its namespaces)
        path = schema.proc_ns_path(r, strings) or paths.get(cg, "")
        if path:
            paths[cg] = path
        out[int(r["pid"])] = {"cgroup_id": cg, "cgroup": path, "netns": int(r["obj2"]),
                              "container": container_name(path)}
    return out


def describe(entry, netns=True):
    """One short phrase for a process's scope: "docker:0123456789ab netns
    4026531840" (the container, else a cgroup but the root; the namespace
    when netns), "" when nothing is known."""
    if not entry:
        return ""
    cgroup = entry.get("cgroup") or ""
    where = entry.get("container") or (cgroup if cgroup != "/" else "")
    ns = entry.get("netns") if netns else 0
    return " ".join(x for x in (where, f"netns {ns}" if ns else "") if x)


def _boottime_minus_monotonic_ns():
    return time.clock_gettime_ns(time.CLOCK_BOOTTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def live_scope(pid, comm, alive_at_ns, proc="/proc"):
    """The scope (as process_scopes) of a process still running on this host
    from /proc, when it is the one a trace saw: same comm, and started no
    later than alive_at_ns (CLOCK_MONOTONIC, a time the trace saw it run);
    {} otherwise (gone, the pid reused, unreadable).  For listings that do
    not decode the buffer (the ring index); a PROC_NS record, when decoded,
    is the truth."""
    try:
        with open(f"{proc}/{int(pid)}/stat", "rb") as f:
            stat = f.read().decode("utf-8", errors="replace")
        with open(f"{proc}/{int(pid)}/cgroup", "rb") as f:
            lines = f.read().decode("utf-8", errors="replace").splitlines()
        netns = os.stat(f"{proc}/{int(pid)}/ns/net").st_ino
    except (OSError, ValueError):
        return {}
    name, _, rest = stat[stat.find("(") + 1:].rpartition(")")
    fields = rest.split()
    if name != comm or len(fields) < 20:
        return {}
    tick = 1_000_000_000 // os.sysconf("SC_CLK_TCK")
    started_ns = int(fields[19]) * tick             # since boot, CLOCK_BOOTTIME
    if started_ns > alive_at_ns + _boottime_minus_monotonic_ns() + tick:
        return {}                                   # a later process with the same pid
    path = next((ln[3:] for ln in lines if ln.startswith("0::")), "")     # cgroup v2
    return {k: v for k, v in (("cgroup", path), ("netns", netns), ("container", container_name(path))) if v}
