"""Relocation tables as data: argus-reloc-table-test (reloc_table_test.c)
runs each arch/<arch>/reloc_<arch>.txt (bytes in, exact bytes or error out)
through the real relocator and capstone; ctest registers the same runs.
argus-reloc-random-test (reloc_random_test.c) feeds it random bytes."""
import os
import subprocess

import pytest

from support.programs import program

HERE = os.path.dirname(os.path.abspath(__file__))


def run_table(arch, path):
    return subprocess.run([program("argus-reloc-table-test"), arch, path], capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("arch", ["x86_64", "arm64"])
def test_relocation_table(arch):
    proc = run_table(arch, os.path.join(HERE, "arch", arch, f"reloc_{arch}.txt"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    passed = int(proc.stdout.strip().splitlines()[-1].split()[0])
    assert passed >= 30, proc.stdout


def test_runner_reports_a_wrong_expectation_and_a_malformed_row(tmp_path):
    # The runner must be able to fail: a row whose expected bytes are wrong,
    # one expecting the wrong error, and a malformed row are all failures.
    table = tmp_path / "t.txt"
    table.write_text("wrong_bytes | 0x1000 | 0x2000 | all | 55 | 56\n"
                     "wrong_error | 0x1000 | 0x2000 | 5 | c3 | error INVALID\n"
                     "right       | 0x1000 | 0x2000 | all | 55 | 55\n"
                     "malformed   | 0x1000 | 55\n")
    proc = run_table("x86_64", str(table))
    assert proc.returncode == 1
    assert "FAIL wrong_bytes" in proc.stdout and "FAIL wrong_error" in proc.stdout
    assert "malformed row" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "1 passed, 3 failed"


def test_usage_error_is_one_line():
    proc = subprocess.run([program("argus-reloc-table-test"), "mips", "x"], capture_output=True, text=True)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def test_random_bytes_never_crash_and_successes_are_well_formed():
    # 2 x 100k seeded random inputs (half starting with a PC-relative opcode)
    proc = subprocess.run([program("argus-reloc-random-test"), "100000", "7"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "2 passed, 0 failed"

