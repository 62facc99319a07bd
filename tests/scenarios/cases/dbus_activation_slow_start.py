"""D-Bus activation: `dbus-send --print-reply` calls org.argus.Indexer on a
private session bus where nobody owns that name yet.  dbus-daemon starts the
service from its .service file (through its babysitter process) and holds
the call; the service builds an index for 3 s on the CPU before it owns the
name, then answers.  The client's poll() for the reply is the hang; the
service, started by the bus and no relative of the client, is the root
cause, through dbus-daemon."""
import json
import os
import subprocess
import time

from harness import DRIVERS, LONG_RUNNING, LONG_WAIT, Scenario, ScenarioError, Truth

SYSTEM_PY = "/usr/bin/python3"   # Debian's python3-gi is built for the system interpreter

SCENARIO = Scenario(
    name="dbus_activation_slow_start",
    summary="dbus-send waits while dbus-daemon activates a service that computes 3 s at start",
    hung="dbus-send's main thread, in libdbus's poll() for the reply",
    spinning_type=LONG_WAIT,
    root="the activated service's main thread, computing before it owns its name (LongRunning), through dbus-daemon",
    root_type=LONG_RUNNING,
    apt=(("dbus-daemon", "dbus-daemon"), ("dbus-bin", "dbus-send"), ("python3-gi", None)),
    cross_process=True,
)

BUS_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={sock}</listen>
  <auth>EXTERNAL</auth>
  <servicedir>{services}</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""


def setup(ctx):
    sock, services = ctx.path("bus", "socket"), os.path.dirname(ctx.path("services", "x"))
    ctx.state["pidfile"] = ctx.path("service.json")
    with open(os.path.join(services, "org.argus.Indexer.service"), "w") as f:
        f.write("[D-BUS Service]\nName=org.argus.Indexer\n"
                f"Exec={SYSTEM_PY} {os.path.join(DRIVERS, 'dbus_activated_service.py')} {ctx.state['pidfile']} 3\n")
    conf = ctx.path("bus", "session.conf")
    with open(conf, "w") as f:
        f.write(BUS_CONF.format(sock=sock, services=services))
    proc = ctx.spawn(["dbus-daemon", f"--config-file={conf}", "--nofork", "--nopidfile"])
    deadline = time.monotonic() + 15
    while not os.path.exists(sock):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise ScenarioError("dbus-daemon did not start")
        time.sleep(0.05)
    ctx.state["bus"] = f"unix:path={sock}"


def reproduce(ctx):
    env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=ctx.state["bus"])
    client = ctx.spawn(["dbus-send", "--session", "--print-reply", "--reply-timeout=60000",
                        "--dest=org.argus.Indexer", "/org/argus/Indexer", "org.argus.Indexer.Lookup",
                        "string:argus"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    out = client.stdout.read()
    if client.wait(timeout=90) != 0 or "entries" not in out:
        raise ScenarioError(f"dbus-send failed: {out.strip()[-200:]}")
    with open(ctx.state["pidfile"]) as f:
        svc = json.load(f)
    return Truth(client.pid, client.pid, roots=[(svc["pid"], svc["tid"])])
