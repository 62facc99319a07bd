"""The arm64 hook runtime (thunks, installer, recorder, agent) cannot run on
this project's x86_64 machines; this compiles every file of it for
aarch64-linux-gnu with zig cc (the ziglang package scripts/setup.sh
installs), as the Linux arm64 build would, -Werror, and checks the objects
are AArch64 ELF.  Capstone's headers come from this machine."""
import os
import struct
import subprocess
import sys

import pytest

SRC = os.path.dirname(os.path.abspath(__file__))
FILES = ["hook.c", "hook_events.c", "ret_deref.c", "recorder.c", "agent.c", "code_alloc.c", "quiesce.c", "uring.c",
         "disasm.c",
         "reader.c", "relocator.c", "arch/arm64/arm64_thunk.c", "arch/arm64/arm64_writer.c",
         "arch/arm64/arm64_relocator.c"]
EM_AARCH64 = 183


def test_hook_runtime_compiles_for_arm64(tmp_path):
    try:
        import ziglang  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("CI must have ziglang (scripts/setup.sh installs it)")
        pytest.skip("ziglang is not installed")
    inc = tmp_path / "include"
    inc.mkdir()
    os.symlink("/usr/include/capstone", inc / "capstone")
    for f in FILES:
        obj = tmp_path / (os.path.basename(f) + ".o")
        cmd = [sys.executable, "-m", "ziglang", "cc", "-target", "aarch64-linux-gnu", "-std=gnu11", "-O2",
               "-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror", "-D_GNU_SOURCE", "-mgeneral-regs-only",
               f"-I{SRC}", f"-I{os.path.join(os.path.dirname(SRC), 'tracer', 'ringbuf')}", "-isystem", str(inc),
               "-c", os.path.join(SRC, f), "-o", str(obj)]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f + ": " + proc.stderr
        with open(obj, "rb") as fh:
            head = fh.read(20)
        assert head[:4] == b"\x7fELF" and struct.unpack_from("<H", head, 18)[0] == EM_AARCH64, f
