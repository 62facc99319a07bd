"""A synchronous D-Bus call from a GTK main loop: the app's main thread calls
a service on a private session bus with g_dbus_connection_call_sync, which
runs a nested main loop (poll() on a private context) until the reply; the
service sleeps 3.5 s before it answers.  The call crosses the GDBus worker
thread and dbus-daemon both ways."""
import os
import subprocess
import time

from harness import DRIVERS, LONG_WAIT, Scenario, ScenarioError, Truth
import servers

SYSTEM_PY = "/usr/bin/python3"   # Debian's python3-gi is built for the system interpreter

SCENARIO = Scenario(
    name="gtk_dbus_call_sync",
    summary="GTK 3 app's main loop blocks 3.5 s in a synchronous D-Bus call to a slow service",
    hung="the GTK application's main thread, in call_sync's nested poll()",
    spinning_type=LONG_WAIT,
    root="the D-Bus service's main thread, sleeping before it answers (through GDBus's worker and dbus-daemon)",
    root_type=LONG_WAIT,
    apt=(("xvfb", "Xvfb"), ("python3-gi", None), ("gir1.2-gtk-3.0", None), ("dbus-daemon", "dbus-daemon")),
    cross_process=True,
    gui=True,
)


def dbus_daemon(ctx):
    """A private session bus; returns its address."""
    sock = ctx.path("bus", "socket")
    proc = ctx.spawn(["dbus-daemon", "--session", "--nofork", "--nopidfile", f"--address=unix:path={sock}"])
    deadline = time.monotonic() + 15
    while not os.path.exists(sock):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise ScenarioError("dbus-daemon did not start")
        time.sleep(0.05)
    return f"unix:path={sock}"


def setup(ctx):
    import json
    ctx.state["display"] = servers.xvfb(ctx)
    ctx.state["bus"] = dbus_daemon(ctx)
    svc = ctx.spawn([SYSTEM_PY, os.path.join(DRIVERS, "dbus_service.py"), ctx.state["bus"]],
                    stdout=subprocess.PIPE, text=True)
    line = svc.stdout.readline()
    if not line:
        raise ScenarioError(f"the D-Bus service exited ({svc.wait()}) before owning its name")
    ctx.state["service"] = json.loads(line)


def reproduce(ctx):
    import json
    env = dict(os.environ, DISPLAY=ctx.state["display"], NO_AT_BRIDGE="1")
    app = ctx.spawn([SYSTEM_PY, os.path.join(DRIVERS, "gtk_dbus_app.py"), ctx.state["bus"], "3.5"],
                    stdout=subprocess.PIPE, text=True, env=env)
    line = app.stdout.readline()
    if not line:
        raise ScenarioError(f"the GTK app exited ({app.wait()}) before reporting its pids")
    ids = json.loads(line)
    out = app.stdout.read()
    if app.wait(timeout=60) != 0 or "reply" not in out:
        raise ScenarioError("the GTK app's D-Bus call did not complete")
    svc = ctx.state["service"]
    return Truth(ids["pid"], ids["tid"], roots=[(svc["pid"], svc["tid"])])
