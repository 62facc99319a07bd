"""`git commit` waits for its pre-commit hook: a Perl hook (a linter's
stand-in) computes 3 s before it lets the commit through.  git runs the hook
with run_command (fork, exec) and waits in waitpid(); the hook's exit ends
the wait, so the hook is the root cause, not git."""
import json
import os
import subprocess

from harness import LONG_RUNNING, LONG_WAIT, Scenario, ScenarioError, Truth

SCENARIO = Scenario(
    name="git_pre_commit_hook",
    summary="git commit waits for a pre-commit hook computing 3 s",
    hung="git's main thread, in wait4() for the hook",
    spinning_type=LONG_WAIT,
    root="the pre-commit hook (a Perl script git exec'd), on the CPU (LongRunning)",
    root_type=LONG_RUNNING,
    apt=(("git", "git"), ("perl", "perl")),
    cross_process=True,
    fast=True,
)

HOOK = r"""#!/usr/bin/perl
# Checks the staged files (a stand-in: computes SECONDS), then allows the commit.
use strict;
use Time::HiRes qw(time);
open(my $f, ">", "PIDFILE") or die "pidfile: $!\n";
print $f "$$\n";
close($f);
my ($t0, $n) = (time(), 0);
$n += sqrt($n + 1) while time() - $t0 < SECONDS;
exit 0;
"""


def git(ctx, *args, **kw):
    r = subprocess.run(["git", "-C", ctx.state["repo"], *args], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise ScenarioError(f"git {args[0]} failed: {r.stderr.strip()[-200:]}")
    return r


def setup(ctx):
    repo = ctx.path("repo", "x")
    ctx.state["repo"] = repo = os.path.dirname(repo)
    ctx.state["pidfile"] = ctx.path("hook.pid")
    subprocess.run(["git", "init", "-q", repo], check=True)
    for k, v in (("user.name", "Scenario"), ("user.email", "scenario@localhost"), ("commit.gpgsign", "false")):
        git(ctx, "config", k, v)
    hook = os.path.join(repo, ".git", "hooks", "pre-commit")
    with open(hook, "w") as f:
        f.write(HOOK.replace("PIDFILE", ctx.state["pidfile"]).replace("SECONDS", "3"))
    os.chmod(hook, 0o755)
    with open(os.path.join(repo, "README"), "w") as f:
        f.write("hello\n")
    git(ctx, "add", "README")


def reproduce(ctx):
    proc = ctx.spawn(["git", "-C", ctx.state["repo"], "commit", "-q", "-m", "first"],
                     env=dict(os.environ, GIT_EDITOR="true"))
    if proc.wait(timeout=120) != 0:
        raise ScenarioError(f"git commit exited with {proc.returncode}")
    with open(ctx.state["pidfile"]) as f:
        hook = int(f.read())
    return Truth(proc.pid, proc.pid, roots=[(hook, None)])
