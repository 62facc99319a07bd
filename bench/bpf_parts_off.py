#!/usr/bin/env python3
"""Builds of Argus with one part of the BPF programs turned off, to profile
where the nanoseconds go (docs/benchmarks.md, "Where the time goes").

Each variant is the source tree of a commit (`git archive`) with one edit
applied to kext/linux, installed into its own venv; the product code has no
switches for this.  The builds are for measuring only: with a part turned off
the trace lacks what that part writes.  Measure them side by side with
bench/bpf_prog_cost.py:

    python3 bench/bpf_parts_off.py --out /tmp/parts            # builds, prints --build flags
    sudo python3 bench/bpf_prog_cost.py --all $(cat /tmp/parts/builds.txt)

The edits match the BPF sources before the per-CPU stage (commit 3ea5afa,
whose code is main's: `--commit 3ea5afa`), where the profile in
docs/benchmarks.md was taken; a commit whose sources moved is refused with
one line naming the variant.

Variants (name: what is skipped):
    full           nothing (the commit as it is)
    no-fd-id       fd identity: channel_of returns before resolving the fd
    no-ringbuf     every record: reserve returns NULL (programs still decide)
    no-rb-query    the ring-buffer fill query per record (never wakes the daemon)
    no-sc-storage  the task-storage lookups of sys_enter / sys_exit
    empty-sys      sys_enter / sys_exit return at once (the dispatch floor)
    empty-hot      sys_enter, sys_exit, sched_switch and sched_waking return at
                   once: the floor of any tracer on these four hooks, for
                   bench/overhead.py (`--argus-base <its venv>/bin/argus`)
    no-net-io      no connection identity: sys_enter notes no socket family, so
                   no NET_IO or NET_IO_SHORT is written and no fd pays the
                   socket check (the "before" of issue 27's records)
    empty-lean     as empty-hot, and the lean tier's own sched_switch_lean and
                   sched_waking_lean return at once too: the floor of the lean
                   tier (`--argus-base <its venv>/bin/argus --base-detail lean`)

empty-sys and empty-hot apply to any commit since 3ea5afa (HEAD included).
"""
import argparse
import os
import subprocess
import sys

# variant -> [(file under kext/linux, old text, new text)]
EDITS = {
    "full": [],
    "no-fd-id": [("channel.bpf.h", "\tf = fd_file(fd);\n\tif (!f)\n\t\treturn 0;", "\treturn 0;")],
    "no-ringbuf": [("argus_trace.bpf.c", "\trec = bpf_ringbuf_reserve(&events, size, 0);", "\treturn NULL;")],
    "no-rb-query": [("argus_trace.bpf.c", "\tif (!wakeup_bytes)\n\t\treturn 0;", "\treturn BPF_RB_NO_WAKEUP;")],
    "no-sc-storage": [
        ("argus_trace.bpf.c", "\tsc = bpf_task_storage_get(&in_syscall, bpf_get_current_task_btf(), NULL,\n"
                              "\t\t\t\t  BPF_LOCAL_STORAGE_GET_F_CREATE);", "\tsc = NULL;"),
        ("argus_trace.bpf.c", "\tsc = bpf_task_storage_get(&in_syscall, bpf_get_current_task_btf(), NULL, 0);\n"
                              "\tif (!sc || !sc->active)\n\t\treturn 0;\n\tenter_nr = sc->nr;\n\tsc->active = 0;",
         "\tenter_nr = nr;"),
    ],
    "no-net-io": [("channel.bpf.h", "\t\tsc->net_family = inet_family_of(f);", "\t\tsc->net_family = 0;")],
    "empty-sys": [
        ("argus_trace.bpf.c", "int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)\n{\n",
         "int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)\n{\n\treturn 0;\n"),
        ("argus_trace.bpf.c", "int BPF_PROG(sys_enter, struct pt_regs *regs, long id)\n{\n",
         "int BPF_PROG(sys_enter, struct pt_regs *regs, long id)\n{\n\treturn 0;\n"),
    ],
}
EDITS["empty-hot"] = EDITS["empty-sys"] + [
    ("argus_trace.bpf.c", "int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,\n"
                          "\t     unsigned int prev_state)\n{\n",
     "int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,\n"
     "\t     unsigned int prev_state)\n{\n\treturn 0;\n"),
    ("argus_trace.bpf.c", "int BPF_PROG(sched_waking, struct task_struct *p)\n{\n",
     "int BPF_PROG(sched_waking, struct task_struct *p)\n{\n\treturn 0;\n"),
]
# lean runs sched_switch_lean / sched_waking_lean beside the two above (their
# own programs, see argus_trace.bpf.c): empty those too for the lean floor
EDITS["empty-lean"] = EDITS["empty-hot"] + [
    ("argus_trace.bpf.c", "int BPF_PROG(sched_switch_lean, bool preempt, struct task_struct *prev, struct task_struct *next,\n"
                          "\t     unsigned int prev_state)\n{\n\tstruct stage_hold h;\n",
     "int BPF_PROG(sched_switch_lean, bool preempt, struct task_struct *prev, struct task_struct *next,\n"
     "\t     unsigned int prev_state)\n{\n\treturn 0;\n\tstruct stage_hold h;\n"),
    ("argus_trace.bpf.c", "int BPF_PROG(sched_waking_lean, struct task_struct *p)\n{\n",
     "int BPF_PROG(sched_waking_lean, struct task_struct *p)\n{\n\treturn 0;\n"),
]


def run(cmd, **kw):
    subprocess.run(cmd, check=True, **kw)


def make_venv(venv):
    """A venv that sees this interpreter's packages (networkx, the build
    backend, ...) but not its .pth hooks.  --system-site-packages would run
    them, and an editable install of argus there (a meta-path finder) would
    then win over the variant's own copy: every variant would run the
    checkout's code and argusd.  A plain directory line in a .pth adds the
    path without processing the .pth files inside it."""
    run([sys.executable, "-m", "venv", venv])
    site = subprocess.run([os.path.join(venv, "bin", "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    with open(os.path.join(site, "_parent_site.pth"), "w") as f:
        f.write("\n".join(p for p in sys.path if p.endswith("site-packages")) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="directory for the variant trees and venvs")
    ap.add_argument("--commit", default="HEAD", help="commit to build (default HEAD)")
    ap.add_argument("--variants", default=",".join(EDITS), help="comma-separated subset of: " + ", ".join(EDITS))
    args = ap.parse_args()
    repo = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                          cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    flags = []
    try:
        for name in args.variants.split(","):
            if name not in EDITS:
                sys.exit(f"bpf_parts_off: unknown variant {name!r}")
            src, venv = os.path.join(args.out, name, "src"), os.path.join(args.out, name, "venv")
            os.makedirs(src, exist_ok=True)
            archive = subprocess.run(["git", "-C", repo, "archive", args.commit], capture_output=True, check=True)
            run(["tar", "-x", "-C", src], input=archive.stdout)
            for fname, old, new in EDITS[name]:
                path = os.path.join(src, "kext", "linux", fname)
                text = open(path).read()
                if text.count(old) != 1:
                    sys.exit(f"bpf_parts_off: variant {name}: the text to replace is not in {fname} once "
                             "(the source moved; update EDITS)")
                open(path, "w").write(text.replace(old, new))
            if not os.path.exists(os.path.join(venv, "bin", "python")):
                make_venv(venv)
            run([os.path.join(venv, "bin", "pip"), "install", "-q", "--no-deps", "--no-build-isolation", src])
            flags.append(f"--build {name}={os.path.join(venv, 'bin', 'argus')}")
            print(f"built {name}", file=sys.stderr)
    except subprocess.CalledProcessError as e:
        sys.exit(f"bpf_parts_off: failed to build a variant: {e}")
    with open(os.path.join(args.out, "builds.txt"), "w") as f:
        f.write(" ".join(flags) + "\n")
    print(" ".join(flags))
    return 0


if __name__ == "__main__":
    sys.exit(main())
