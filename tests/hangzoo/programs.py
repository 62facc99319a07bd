"""Renders a case's program and builds it once into a cache directory keyed
by the hash of its source (C: cc -O1 -pthread; Go: go build with the
standard library only, offline; Python: the source file itself).

`command(case, scratch)` is what runs the case: argv[1] is its scratch
directory (lock files, socket paths, the fsync file).
"""
import hashlib
import os
import shutil
import subprocess
import sys

import gen
import render_c
import render_go
import render_py

CACHE = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "argus-hangzoo")
GO = os.environ.get("HANGZOO_GO") or shutil.which("go") or "/usr/local/go/bin/go"
RENDER = {gen.C: (render_c.render, ".c"), gen.PY: (render_py.render, ".py"), gen.GO: (render_go.render, ".go")}


class BuildError(Exception):
    pass


def source(case):
    render, ext = RENDER[case.lang]
    return render(case), ext


def build(case):
    """Path of the built program (or the Python script)."""
    text, ext = source(case)
    key = hashlib.sha256(text.encode()).hexdigest()[:16]
    os.makedirs(CACHE, mode=0o700, exist_ok=True)
    src = os.path.join(CACHE, f"{case.lang}-{key}{ext}")
    if case.lang == gen.PY:
        exe = src
    else:
        exe = os.path.join(CACHE, f"{case.lang}-{key}.bin")
    if os.path.exists(exe):
        return exe
    tmp = src + f".{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, src)
    out = exe + f".{os.getpid()}.tmp"   # two runs building one case at once each write their own
    if case.lang == gen.C:
        cmd = ["cc", "-O1", "-pthread", "-o", out, src]
    elif case.lang == gen.GO:
        gocache = os.path.join(CACHE, "gocache")
        cmd = [GO, "build", "-o", out, src]
        env = dict(os.environ, GOPROXY="off", GO111MODULE="off", GOCACHE=gocache,
                   GOTOOLCHAIN="local")
    else:
        return exe
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env=env if case.lang == gen.GO else None, cwd=CACHE)
    if proc.returncode != 0:
        raise BuildError(f"{case.id}: {' '.join(cmd[:2])} failed: {proc.stderr.strip()[-1500:]}")
    os.replace(out, exe)
    return exe


def command(case, scratch):
    exe = build(case)
    if case.lang == gen.PY:
        return [sys.executable, exe, scratch]
    return [exe, scratch]
