"""argus flags on a flag tested at two branch sites (issue 24).

tests/programs/split_poll.c, built here with `cc -O1`: gcc rotates the poll
loop, so the flag is tested by `jne` at the entry of a normal call and by
`je` at the bottom of the spinning loop (checked with objdump).  The two
instruction streams (recorded with the real lldb script, as
test_lldb_script.py does) share no branch, so only the values they read
name the flag; `argus flags` must rank it first.
"""
import json
import os
import re
import shutil
import signal
import subprocess

import pytest

from test_bp_watch import require_root

SOURCE = os.path.join(os.path.dirname(__file__), "programs", "split_poll.c")


def _build(tmp_path):
    if not shutil.which("cc") or not shutil.which("objdump"):
        pytest.skip("needs cc and objdump")
    exe = str(tmp_path / "argus-split-poll")
    subprocess.run(["cc", "-O1", "-o", exe, SOURCE], check=True)
    return exe


def _flag_tests(exe):
    """[(load address, mnemonic of the first conditional branch after it)] in split_wait."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", exe], capture_output=True, text=True,
                         check=True).stdout
    body = out.split("<split_wait>:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    sites, pending = [], None
    for line in body:
        m = re.match(r"\s*([0-9a-f]+):\s+(\S+)", line)
        if not m:
            continue
        if "<split_ready>" in line:
            pending = m.group(1)
        elif pending and m.group(2).startswith("j") and m.group(2) != "jmp":
            sites.append((pending, m.group(2)))
            pending = None
    return sites


def test_flag_at_two_branch_sites_ranks_first(argus_cli, tmp_path):
    require_root()
    pytest.importorskip("lldb")
    exe = _build(tmp_path)
    sites = _flag_tests(exe)
    assert sorted(j for _, j in sites) == ["je", "jne"], sites     # two loads, two different branches
    buf = str(tmp_path / "trace.argus")
    prog = subprocess.Popen([exe], stdout=subprocess.PIPE, text=True)
    info = json.loads(prog.stdout.readline())
    pid = info["pid"]
    try:
        base = ["flags", "--pid", str(pid), "--function", "split_wait", "--buffer", buf]
        out = argus_cli.run(*base, "--record", "spinning", "--max-steps", "100").stdout
        assert "stop: max_steps" in out, out
        os.kill(pid, signal.SIGUSR2)              # the flag is set: later calls return at once
        out = argus_cli.run(*base, "--record", "normal", "--next-call", "--max-steps", "500").stdout
        assert "stop: returned" in out, out
        rep = argus_cli.json("flags", "--pid", str(pid), "--buffer", buf, "--json")
        assert rep["divergences"] == []          # no branch both streams ran: the old answer
        top = rep["flags"][0]
        assert top["addr"] == info["flag_addr"] and top["size"] == 4
        assert top["symbol"] == "argus-split-poll:split_ready"
        assert top["spinning_values"] == [0] and top["normal_values"] == [1]
        assert top["consistent"] and top["every_iteration"] and top["spinning_reads"] >= 5
        tested = {k: [t["asm"].split()[0] for t in v] for k, v in top["tested_by"].items()}
        assert tested == {"normal": ["jne"], "spinning": ["je"]} and top["split_sites"]
        assert top["bp_watch"] == f"bp_watch {pid} argus-split-poll split_ready"
        polls = [f for f in rep["flags"] if f["symbol"] == "argus-split-poll:split_polls"]
        assert polls and not polls[0]["consistent"]      # differs, but every round anew
        text = argus_cli.run("flags", "--pid", str(pid), "--buffer", buf).stdout
        assert "\n1. argus-split-poll:split_ready (4 bytes)" in text, text
        assert f"bp_watch {pid} argus-split-poll split_ready" in text
    finally:
        os.kill(pid, signal.SIGUSR1)
        assert prog.wait(timeout=60) == 0
