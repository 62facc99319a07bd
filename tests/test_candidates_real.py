"""`argus debug` without --pid on real programs (issue 15, item 4): beside a
real hang (the bundled demo: an app waiting on a daemon whose helper is
stuck), a Python ticker with an event loop's idle waits that then sleeps
10 ms at a time, and a bash script running `sleep 0.01` in a loop (bash
reads its script on fd 255) both run on after the hang ends.  The most
recent hang of an event-loop thread used to be the ticker's sleep loop
(a RepeatedYield); a user means the demo app, and the ranking must say so."""
import json
import subprocess
import sys

from conftest import run_demo

TICKER = """
import select, sys, time
print("ticking", flush=True)
for _ in range(int(sys.argv[1])):
    for _ in range(6):
        select.select([], [], [], 0.01)      # an event loop's idle waits, in every window
    end = time.monotonic() + 3.2
    while time.monotonic() < end:
        time.sleep(0.01)                     # then 3.2 s of 10 ms sleeps: a RepeatedYield stretch
"""


def test_debug_without_pid_skips_sleep_loops_and_shells(tracing, tmp_path):
    script = tmp_path / "loop.sh"
    script.write_text("#!/bin/bash\nfor i in $(seq 600); do sleep 0.01; done\n")
    ticker = subprocess.Popen([sys.executable, "-c", TICKER, "3"], stdout=subprocess.PIPE, text=True)
    shell = subprocess.Popen(["bash", str(script)])
    try:
        assert ticker.stdout.readline().strip() == "ticking"
        info, rc = run_demo("--requests", "40", "--hang-at", "30", "--hang-ms", "4000",
                            "--interval-ms", "20", "--stuck", "run")
        assert rc == 0
        assert ticker.wait(timeout=60) == 0
        shell.wait(timeout=60)
    finally:
        ticker.kill()
        shell.kill()
    tracing.wait_drained()
    tracing.stop()

    # The machine is shared (other tests' programs run too): the list must hold
    # the demo app and neither sleep loop, and debug must never pick a sleep loop.
    listed = tracing.run("hangs", "--buffer", tracing.buffer, "--threshold", "2.5", "--top", "100000",
                         "--window", "0").stdout
    assert f"/{ticker.pid} " not in listed and f"/{shell.pid} " not in listed, listed
    assert f"/{info['app_pid']} main" in listed, listed
    proc = tracing.run("debug", "--buffer", tracing.buffer, "--auto", "--json", "--threshold", "2.5")
    spin = json.loads(proc.stdout)["spinning"]
    assert spin["pid"] not in (ticker.pid, shell.pid), (spin["comm"], proc.stderr)
    report = json.loads(tracing.run("debug", "--buffer", tracing.buffer, "--auto", "--json", "--threshold", "2.5",
                                    "--pid", str(info["app_pid"])).stdout)
    assert any(c["tid"] == info["helper_tid"] for c in report["root_causes"])
