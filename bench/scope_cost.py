#!/usr/bin/env python3
"""What the --cgroup / --netns scope test costs in the BPF programs, unset
and set: the verifier's translated size (xlated and JITed bytes) of each
program of interest, read with bpftool from a daemon started unscoped and
one started scoped to its own (the root) network namespace (which records the same
tasks, through the test).

kext/linux/scope.bpf.h reads its scope from `const volatile` globals: at
load they are constants, so unscoped the verifier removes the test (dead
code) and the programs must be the size they would be without it.  Scoped,
the programs grow by the test (the nsproxy / cgroup reads); the difference
is what a scoped daemon pays per event.

    sudo python3 bench/scope_cost.py            # prints one line per program
"""
import json
import os
import subprocess
import sys
import tempfile

NAMES = ("sched_switch", "sched_waking", "sys_enter", "handle_sys_enter", "sched_process_exec",
         "sched_process_fork", "hrtimer_start", "sched_switch_lean")


def progs():
    out = subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True, text=True, check=True).stdout
    return {p["id"]: p for p in json.loads(out)}


def prog_ids_of(pid):
    """The ids of the BPF programs process pid holds a descriptor of (fdinfo prog_id)."""
    ids = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            continue
    return ids


def sizes(scope):
    """{program name: (xlated bytes, jited bytes)} of a daemon started with scope flags."""
    tmp = tempfile.mkdtemp()
    env = dict(os.environ, ARGUS_RUN_DIR=os.path.join(tmp, "run"), ARGUS_STATE_DIR=os.path.join(tmp, "state"))
    cli = [sys.executable, "-m", "argus.cli"]
    subprocess.run(cli + ["start", "--buffer", os.path.join(tmp, "b.argus"), "--size", "64M",
                          "--no-hang-detector", "--no-sample", *scope], env=env, check=True, capture_output=True)
    try:
        st = json.loads(subprocess.run(cli + ["status", "--json"], env=env, capture_output=True, text=True,
                                       check=True).stdout)
        # this daemon's programs (its fds): other daemons may load theirs meanwhile
        mine = prog_ids_of(st["pid"])
        new = {p["name"]: (p.get("bytes_xlated", 0), p.get("bytes_jited", 0))
               for i, p in progs().items() if i in mine and p.get("name") in NAMES}
    finally:
        subprocess.run(cli + ["stop"], env=env, capture_output=True)
    return new


def main():
    if os.geteuid() != 0:
        sys.exit("scope_cost: needs root (it starts argusd)")
    unset = sizes(())
    scoped = sizes(("--netns", "/proc/self/ns/net"))   # argusd reads it: its own, the root one
    print(f"{'program':24} {'xlated unset':>13} {'xlated scoped':>14} {'jited unset':>12} {'jited scoped':>13}")
    for name in sorted(unset):
        u, s = unset[name], scoped.get(name, (0, 0))
        print(f"{name:24} {u[0]:13} {s[0]:14} {u[1]:12} {s[1]:13}")


if __name__ == "__main__":
    main()
