"""A Redis client blocks on its reply while redis-server's single main thread
runs a long Lua script (EVAL): the classic "Redis is busy" hang."""
from harness import LONG_RUNNING, LONG_WAIT, Scenario, Truth
import servers

SCENARIO = Scenario(
    name="redis_lua_busy",
    summary="redis-server main thread runs a 3.5 s Lua script; the client waits for the reply",
    hung="the client's main thread, blocked in recv() on its Redis socket",
    spinning_type=LONG_WAIT,
    root="redis-server's main thread, running the script",
    root_type=LONG_RUNNING,
    apt=(("redis-server", "redis-server"),),
    cross_process=True,
    fast=True,
)


def setup(ctx):
    ctx.state["server"], ctx.state["port"] = servers.redis(ctx)


def reproduce(ctx):
    server = ctx.state["server"]
    client, ids = ctx.driver("redis_client.py", ctx.state["port"], "lua", 3.5)
    ctx.finish(client)
    return Truth(ids["pid"], ids["tid"], roots=[(server.pid, server.pid)])
