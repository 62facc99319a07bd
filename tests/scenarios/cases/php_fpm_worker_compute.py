"""A PHP-FPM worker pool behind nginx: curl requests a PHP page whose worker
computes 3 s.  nginx passes the request over FastCGI on a UNIX socket to one
of two static pool workers (php-fpm's master hands out nothing: the workers
accept() on the shared socket themselves).  The hang is curl's wait; the
root cause is the worker that took the request, through nginx's worker."""
import glob
import json
import os
import subprocess
import time
import urllib.request

from harness import LONG_RUNNING, LONG_WAIT, Scenario, ScenarioError, Truth, free_port, wait_port

SCENARIO = Scenario(
    name="php_fpm_worker_compute",
    summary="curl waits on nginx while a PHP-FPM pool worker computes 3 s in the page",
    hung="curl's main thread, in poll() on its connection to nginx",
    spinning_type=LONG_WAIT,
    root="the PHP-FPM worker that accepted the FastCGI request, computing (LongRunning), through nginx's worker",
    root_type=LONG_RUNNING,
    apt=(("php-fpm", None), ("nginx", "nginx"), ("curl", "curl")),
    cross_process=True,
)

FPM_CONF = """[global]
pid = {tmp}/fpm/php-fpm.pid
error_log = {tmp}/fpm/error.log
daemonize = no

[app]
user = root
group = root
listen = {sock}
listen.mode = 0666
pm = static
pm.max_children = 2
"""

PAGE = """<?php
file_put_contents(__DIR__ . "/worker.json", json_encode(["pid" => getmypid()]));
$t0 = microtime(true);
$n = 0;
while (microtime(true) - $t0 < 3.0) { $n++; }
echo "report: $n rows\\n";
"""

NGINX_CONF = """daemon off;
master_process on;
worker_processes 1;
user root;
pid {tmp}/nginx/nginx.pid;
error_log {tmp}/nginx/error.log;
events {{ worker_connections 64; }}
http {{
  access_log off;
  client_body_temp_path {tmp}/nginx/tmp;
  fastcgi_temp_path {tmp}/nginx/tmp;
  server {{
    listen 127.0.0.1:{port};
    root {docroot};
    location ~ \\.php$ {{
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
      fastcgi_pass unix:{sock};
      fastcgi_read_timeout 60s;
    }}
  }}
}}
"""


def setup(ctx):
    fpm = sorted(glob.glob("/usr/sbin/php-fpm*"))
    if not fpm:
        raise ScenarioError("php-fpm is installed but no /usr/sbin/php-fpm* binary was found")
    sock, docroot = ctx.path("fpm", "app.sock"), os.path.dirname(ctx.path("www", "x"))
    os.makedirs(ctx.path("nginx", "tmp", "x"), exist_ok=True)
    with open(ctx.path("fpm", "php-fpm.conf"), "w") as f:
        f.write(FPM_CONF.format(tmp=ctx.tmp, sock=sock))
    with open(os.path.join(docroot, "report.php"), "w") as f:
        f.write(PAGE)
    with open(os.path.join(docroot, "ping.php"), "w") as f:
        f.write("<?php echo 'pong';\n")
    ctx.state["worker_file"] = os.path.join(docroot, "worker.json")
    master = ctx.spawn([fpm[-1], "-F", "-R", "-y", ctx.path("fpm", "php-fpm.conf")])
    deadline = time.monotonic() + 20
    while not os.path.exists(sock):
        if master.poll() is not None or time.monotonic() > deadline:
            raise ScenarioError(f"php-fpm did not start (see {ctx.path('fpm', 'error.log')})")
        time.sleep(0.05)
    port = free_port()
    with open(ctx.path("nginx", "nginx.conf"), "w") as f:
        f.write(NGINX_CONF.format(tmp=ctx.tmp, port=port, docroot=docroot, sock=sock))
    nginx = ctx.spawn(["nginx", "-c", ctx.path("nginx", "nginx.conf"), "-p", ctx.path("nginx") + "/"])
    wait_port(port, proc=nginx)
    ctx.state["port"] = port
    # one quick page before tracing: the pool and nginx's upstream path are warm
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/ping.php", timeout=20) as r:
        if r.read() != b"pong":
            raise ScenarioError("php-fpm did not serve ping.php")


def reproduce(ctx):
    client = ctx.spawn(["curl", "-sS", "--max-time", "60", f"http://127.0.0.1:{ctx.state['port']}/report.php"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = client.stdout.read()
    if client.wait(timeout=90) != 0 or "report:" not in out:
        raise ScenarioError(f"curl failed: {out.strip()[-200:]}")
    with open(ctx.state["worker_file"]) as f:
        worker = json.load(f)["pid"]
    return Truth(client.pid, client.pid, roots=[(worker, None)])
