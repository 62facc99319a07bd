"""Where processes live: cgroup, network namespace and container name.

PROC_NS records (tracer/ringbuf/argus_event.h) carry a process's cgroup v2
id and path and its network namespace inode; they are written at start-up,
exec, fork and cgroup moves.  container_name() reads a runtime's name from
the cgroup path, by the layouts the runtimes and systemd use:

    .../docker-<id>.scope, /docker/<id>             docker:<id[:12]>
    .../libpod-<id>.scope, libpod-conmon-<id>.scope  podman:<id[:12]>
    .../cri-containerd-<id>.scope, /kubepods/.../<id>  containerd:<id[:12]>
    .../crio-<id>.scope                              cri-o:<id[:12]>
    .../NAME.service, .../session-N.scope, X.scope  the unit (the innermost)
"""
import re

from . import schema

_ID = r"([0-9a-f]{12,64})"
# (pattern on one path component, runtime); the innermost match wins
_RUNTIMES = (
    (re.compile(rf"^docker-{_ID}\.scope$"), "docker"),
    (re.compile(rf"^libpod-(?:conmon-)?{_ID}\.scope$"), "podman"),
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
