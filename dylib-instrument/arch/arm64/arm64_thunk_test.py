"""The arm64 enter and return thunks (arm64_thunk.c) as data, on any host:
argus-thunk-arm64-test (arm64_thunk_test.c) builds them and compares every
byte with thunk_arm64.txt, assembled by llvm-mc."""
import os
import subprocess

from support.programs import program

HERE = os.path.dirname(os.path.abspath(__file__))


def test_arm64_thunks_as_data():
    # the arm64 enter/return thunks, byte for byte against llvm-mc's assembly
    proc = subprocess.run([program("argus-thunk-arm64-test"), os.path.join(HERE, "thunk_arm64.txt")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "4 passed, 0 failed"
