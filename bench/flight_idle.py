#!/usr/bin/env python3
"""The flight recorder on an idle desktop-like machine: false positives and
detection latency (issue 12 item 1; docs/flight-recorder.md).

Under Xvfb, an idle GTK 3 app (a clock label refreshed every 50 ms), an idle
redis and an idle nginx (master + worker) run for --minutes while `argus
start` traces with the hang detector on.  Every --demo-every seconds the
bundled demo hang (an event loop blocked 3 s on a synchronous request) runs
once: those hangs must be recorded, and give the detection latency.  Then:

  false positives  snapshots of the idle processes (GTK app, redis, nginx, Xvfb)
  foreign          snapshots of other processes (this machine is shared: other
                   people's tests hang their programs on purpose); listed, not
                   counted as false positives of the idle set
  latency          detect_ns - start_ns - threshold: how long after a hang
                   crossed the threshold the detector noticed it (100 ms check
                   period + drain), and hang end -> snapshot file on disk

    sudo python3 bench/flight_idle.py --minutes 10 --json bench/results/flight-idle.json

A benchmark, not a test: it asserts nothing.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

GTK_CLOCK = r"""
import gi
gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk
win = Gtk.Window(title="clock")
label = Gtk.Label(label="0")
win.add(label)
win.show_all()
n = [0]
def tick():
    n[0] += 1
    label.set_text(str(n[0]))
    return True
GLib.timeout_add(50, tick)
win.connect("destroy", Gtk.main_quit)
Gtk.main()
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def argus(env, *args, check=True):
    proc = subprocess.run([sys.executable, "-m", "argus.cli", *args], env=env, capture_output=True, text=True)
    if check and proc.returncode:
        raise SystemExit(f"argus {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=10)
    ap.add_argument("--demo-every", type=float, default=150, metavar="S")
    ap.add_argument("--size", default="256M")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args()
    import argus as argus_pkg
    demo = os.path.join(argus_pkg.NATIVE_DIR, "argus-demo-hang")
    tmp = tempfile.mkdtemp(prefix="argus-flight-idle-")
    env = dict(os.environ, ARGUS_RUN_DIR=os.path.join(tmp, "run"), ARGUS_STATE_DIR=os.path.join(tmp, "state"))
    procs, idle = [], {}
    try:
        for n in range(90, 140):
            if not os.path.exists(f"/tmp/.X11-unix/X{n}") and not os.path.exists(f"/tmp/.X{n}-lock"):
                break
        xvfb = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "800x600x24", "-nolisten", "tcp"],
                                stderr=subprocess.DEVNULL)
        procs.append(xvfb)
        idle[xvfb.pid] = "Xvfb"
        while not os.path.exists(f"/tmp/.X11-unix/X{n}"):
            time.sleep(0.05)
        gtk = subprocess.Popen(["/usr/bin/python3", "-c", GTK_CLOCK], env=dict(env, DISPLAY=f":{n}"),
                               stderr=subprocess.DEVNULL)
        procs.append(gtk)
        idle[gtk.pid] = "gtk-clock"
        redis = subprocess.Popen([shutil.which("redis-server"), "--port", str(free_port()), "--bind", "127.0.0.1",
                                  "--save", "", "--appendonly", "no", "--dir", tmp], stdout=subprocess.DEVNULL)
        procs.append(redis)
        idle[redis.pid] = "redis"
        os.makedirs(os.path.join(tmp, "nginx", "tmp"), exist_ok=True)
        conf = os.path.join(tmp, "nginx", "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"daemon off; master_process on; worker_processes 1; pid {tmp}/nginx/nginx.pid;\n"
                    f"error_log {tmp}/nginx/error.log; events {{ worker_connections 64; }}\n"
                    f"http {{ access_log off; client_body_temp_path {tmp}/nginx/tmp; "
                    f"server {{ listen 127.0.0.1:{free_port()}; location / {{ return 204; }} }} }}\n")
        nginx = subprocess.Popen(["nginx", "-c", conf, "-p", os.path.join(tmp, "nginx") + "/"])
        procs.append(nginx)
        idle[nginx.pid] = "nginx"
        time.sleep(2)
        for line in subprocess.run(["pgrep", "-P", str(nginx.pid)], capture_output=True, text=True).stdout.split():
            idle[int(line)] = "nginx-worker"

        # many snapshots may come from other processes of a shared machine: keep them all, small
        argus(env, "start", "--buffer", os.path.join(tmp, "trace.argus"), "--size", args.size,
              "--snapshot-before", "5", "--snapshot-max-count", "1000", "--snapshot-max-total", "4G")
        t0 = time.monotonic()
        end = t0 + args.minutes * 60
        demos, next_demo = [], t0 + args.demo_every / 2
        state_dir = os.path.join(tmp, "state", "snapshots")
        seen = {}      # id -> (listing entry, metadata): collected as they come, pruning may delete them later

        def collect():
            for s in json.loads(argus(env, "hangs", "--recorded", "--json"))["snapshots"]:
                if s.get("damaged") or s["id"] in seen:
                    continue
                try:
                    with open(os.path.join(state_dir, s["id"] + ".json")) as f:
                        seen[s["id"]] = (s, json.load(f))
                except (OSError, ValueError):
                    pass

        last_collect = 0
        while time.monotonic() < end:
            if time.monotonic() - last_collect >= 10:
                collect()
                last_collect = time.monotonic()
            if time.monotonic() >= next_demo:
                p = subprocess.Popen([demo, "--requests", "40", "--hang-at", "30", "--hang-ms", "3000",
                                      "--interval-ms", "20", "--stuck", "sleep"], stdout=subprocess.PIPE, text=True)
                demos.append(json.loads(p.stdout.readline()))
                p.communicate()
                next_demo += args.demo_every
            time.sleep(1)
        time.sleep(3)
        status = json.loads(argus(env, "status", "--json"))
        collect()
        argus(env, "stop", check=False)
        collect()
        snaps = [s for s, _ in seen.values()]
        metas = {sid: m for sid, (_, m) in seen.items()}
        demo_pids = {d["app_pid"] for d in demos}
        found = [metas[s["id"]] for s in snaps if s.get("pid") in demo_pids]
        lat = sorted((m["detect_ns"] - m["start_ns"] - m["threshold_ns"]) / 1e6 for m in found)
        fps = [dict(id=s["id"], who=idle[s["pid"]], dur_s=s["dur_ns"] / 1e9, guess=s["block_type_guess"])
               for s in snaps if s.get("pid") in idle]
        foreign = [dict(id=s["id"], process=s["process"], dur_s=round(s["dur_ns"] / 1e9, 1),
                        guess=s["block_type_guess"], wait=s["wait_reason"])
                   for s in snaps if s.get("pid") not in idle and s.get("pid") not in demo_pids]
        res = {
            "minutes": args.minutes, "idle_processes": sorted(set(idle.values())),
            "demo_hangs": len(demos), "demo_hangs_recorded": len({m["pid"] for m in found}),
            "false_positives": len(fps), "false_positive_list": fps,
            "foreign_snapshots": len(foreign), "foreign_list": foreign,
            "detect_latency_ms_past_threshold": lat,
            "watched_loops_at_end": status.get("watched_loops"), "hangs_detected": status.get("hangs_detected"),
            "events": status.get("events"), "events_per_s": status.get("events_per_s"),
        }
        print(json.dumps(res, indent=1))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=1)
    finally:
        argus(env, "stop", check=False)
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
