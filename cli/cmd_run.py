"""`argus run -- CMD`: run a program with the trampoline agent.

The agent (libargus-agent.so, dylib-instrument/agent.c) goes in through
LD_PRELOAD; it hooks the functions of the hook spec (dylib-instrument/hooks/,
or --hooks FILE) as their libraries load, dlopen included, and records into
per-thread rings that the running daemon (`argus start`) drains into its
trace.  The command's exit status is argus run's.
"""
import os
import secrets
import signal
import subprocess

from argus.hooks import hookspec
from argus.tracer import safe_files
from argus.cli.common import RUN_DIR, ArgusError, native_path, open_run_dir


def register(sub):
    p = sub.add_parser("run", help="run a program with user-space tracepoints (trampolines)",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("--hooks", action="append", metavar="FILE",
                   help="hook spec file (JSON; repeatable); default: the installed spec")
    p.add_argument("--verbose", action="store_true", help="the agent reports each hook it installs or skips")
    p.add_argument("command", nargs="+", metavar="-- CMD [ARG...]")
    p.set_defaults(func=run_run)


def ring_dir():
    return os.path.join(RUN_DIR, "urings")


def agent_env(base, agent, hooks_file, verbose):
    env = dict(base)
    preload = env.get("LD_PRELOAD", "")
    env["LD_PRELOAD"] = f"{agent}:{preload}" if preload else agent
    env["ARGUS_URING_DIR"] = ring_dir()
    env["ARGUS_HOOKS"] = hooks_file
    if verbose:
        env["ARGUS_AGENT_VERBOSE"] = "1"
    return env


def run_run(args):
    hooks = hookspec.load(args.hooks)
    agent = native_path("libargus-agent.so")
    if not os.path.isdir(RUN_DIR) or not os.access(RUN_DIR, os.X_OK):
        raise ArgusError(f"no tracing daemon reachable ({RUN_DIR} is missing or not ours): run `argus start` first, "
                         f"as the same user")
    if not os.path.isdir(ring_dir()):
        raise ArgusError(f"no tracing daemon takes tracepoints ({ring_dir()} is missing): run `argus start` first")
    if not os.access(ring_dir(), os.W_OK | os.X_OK):
        raise ArgusError(f"{ring_dir()} is not writable by this user: run `argus run` as the user running argusd")
    dir_fd = open_run_dir()          # verified: ours or root's, writable by nobody else
    if dir_fd is None:
        raise ArgusError(f"no tracing daemon reachable ({RUN_DIR} is missing or not ours): run `argus start` first")
    name = f"hooks-{secrets.token_hex(8)}.list"
    try:
        safe_files.write_file(dir_fd, name, hookspec.flatten(hooks))     # 0600, the one writer
        env = agent_env(os.environ, agent, os.path.join(RUN_DIR, name), args.verbose)
        try:
            proc = subprocess.Popen(args.command, env=env)
        except OSError as e:
            raise ArgusError(f"cannot run {args.command[0]}: {e.strerror}")
        # Ctrl-C reaches the program (same process group); we wait for it.
        # Ignored only after the spawn: an ignored signal survives exec.
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            rc = proc.wait()
        finally:
            signal.signal(signal.SIGINT, old)
        return 128 - rc if rc < 0 else rc
    finally:
        try:
            os.unlink(name, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        os.close(dir_fd)
