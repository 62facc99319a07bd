"""Starting the real servers the scenarios hang: each on loopback, in the
scenario's scratch directory, through Context.spawn (so Context.close stops
it). Each returns what a driver needs to reach it."""
import glob
import os
import shutil
import subprocess
import time

from harness import ScenarioError, free_port, wait_port


def redis(ctx, *extra):
    exe = shutil.which("redis-server")
    port = free_port()
    proc = ctx.spawn([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                      "--dir", ctx.tmp, "--busy-reply-threshold", "60000", *extra])
    wait_port(port, proc=proc)
    return proc, port


def memcached(ctx, threads=4):
    port = free_port()
    proc = ctx.spawn(["memcached", "-u", "root", "-l", "127.0.0.1", "-p", str(port), "-U", "0",
                      "-t", str(threads), "-m", "64"])
    wait_port(port, proc=proc)
    return proc, port


def _pg_bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise ScenarioError("PostgreSQL's initdb not found under /usr/lib/postgresql")
    return os.path.dirname(found[-1])


def postgres(ctx):
    """A private cluster owned by the `postgres` user (initdb refuses root);
    returns (postmaster proc, port, socket dir)."""
    bindir = _pg_bin()
    data = os.path.join(ctx.tmp, "pgdata")
    sock = os.path.join(ctx.tmp, "pgsock")
    os.chmod(ctx.tmp, 0o755)
    for d in (sock, data):
        os.makedirs(d, exist_ok=True)
        shutil.chown(d, "postgres")
    r = subprocess.run(["runuser", "-u", "postgres", "--", os.path.join(bindir, "initdb"), "-D", data,
                        "-A", "trust", "-U", "postgres", "--no-sync"], capture_output=True, text=True)
    if r.returncode != 0:
        raise ScenarioError(f"initdb failed: {r.stderr.strip()[-300:]}")
    port = free_port()
    proc = ctx.spawn(["runuser", "-u", "postgres", "--", os.path.join(bindir, "postgres"), "-D", data,
                      "-p", str(port), "-k", sock, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
                      "-c", "deadlock_timeout=60s", "-c", "log_min_messages=fatal"])
    wait_port(port, timeout=30, proc=proc)
    return proc, port, sock


def nginx(ctx, upstream_port):
    port = free_port()
    conf = ctx.path("nginx", "nginx.conf")
    os.makedirs(ctx.path("nginx", "tmp", "x"), exist_ok=True)
    with open(conf, "w") as f:
        f.write(f"""daemon off;
master_process on;
worker_processes 1;
pid {ctx.tmp}/nginx/nginx.pid;
error_log {ctx.tmp}/nginx/error.log;
events {{ worker_connections 64; }}
http {{
  access_log off;
  client_body_temp_path {ctx.tmp}/nginx/tmp;
  proxy_temp_path {ctx.tmp}/nginx/tmp;
  upstream app {{ server 127.0.0.1:{upstream_port}; keepalive 4; }}
  server {{
    listen 127.0.0.1:{port};
    location / {{
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_read_timeout 60s;
    }}
  }}
}}
""")
    proc = ctx.spawn(["nginx", "-c", conf, "-p", ctx.path("nginx") + "/"])
    wait_port(port, proc=proc)
    return proc, port


def xvfb(ctx):
    """A private X display; returns its name (":N")."""
    for n in range(90, 140):
        if not os.path.exists(f"/tmp/.X11-unix/X{n}") and not os.path.exists(f"/tmp/.X{n}-lock"):
            break
    else:
        raise ScenarioError("no free X display number")
    proc = ctx.spawn(["Xvfb", f":{n}", "-screen", "0", "800x600x24", "-nolisten", "tcp"])
    deadline = time.monotonic() + 15
    while not os.path.exists(f"/tmp/.X11-unix/X{n}"):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise ScenarioError("Xvfb did not start")
        time.sleep(0.05)
    return f":{n}"
