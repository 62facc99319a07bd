"""A Redis client blocks while redis-server's main thread sleeps inside a
command (DEBUG SLEEP, Redis's own stand-in for a command stuck in a blocking
call): the server is not busy, it waits on a timer."""
from harness import LONG_WAIT, Scenario, Truth
import servers

SCENARIO = Scenario(
    name="redis_debug_sleep",
    summary="redis-server main thread sleeps 3.5 s inside DEBUG SLEEP; the client waits for the reply",
    hung="the client's main thread, blocked in recv() on its Redis socket",
    spinning_type=LONG_WAIT,
    root="redis-server's main thread, sleeping (a timer wait) in the command",
    root_type=LONG_WAIT,
    apt=(("redis-server", "redis-server"),),
    cross_process=True,
)


def setup(ctx):
    ctx.state["server"], ctx.state["port"] = servers.redis(ctx, "--enable-debug-command", "yes")


def reproduce(ctx):
    server = ctx.state["server"]
    client, ids = ctx.driver("redis_client.py", ctx.state["port"], "debug_sleep", 3.5)
    ctx.finish(client)
    return Truth(ids["pid"], ids["tid"], roots=[(server.pid, server.pid)])
