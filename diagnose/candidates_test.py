"""Ranking the hangs `argus debug` picks from without --pid (candidates.py)."""
from support.crafted import Trace, ms, s
from argus.tracer import schema
from argus.diagnose import candidates as C
from argus.diagnose import hangs as H

GUI, SHELL, TICKER, LOOP, CLIENT, SLEEPER, XORG, SERVER = 100, 200, 300, 500, 600, 700, 400, 800
END = s(12)


def machine():
    """0-12 s of a desktop:
      gtk-app 100   a window (unix socket to Xorg), busy on CPU 1-6 s, no poll in the trace
      bash 200      runs a script (reads fd 255), 10 ms `sleep` children in a loop, then wait4 3 s
      ticker 300    sleeps 2.5 s, again and again (clock_nanosleep)
      loop-app 500  event loop (epoll), then a futex wait 6-10 s
      client 600    no event loop, reads a pipe 4-11 s
      sleeper 700   clock_nanosleep 10 ms in a loop for 10 s
    """
    t = Trace()
    for pid, comm in ((GUI, "gtk-app"), (SHELL, "bash"), (TICKER, "ticker"), (LOOP, "loop-app"),
                      (CLIENT, "client"), (SLEEPER, "sleeper"), (XORG, "Xorg"), (SERVER, "server")):
        t.thread(pid, pid, comm)
        t.run(pid, 0)
    # the window: gtk-app's socket (local 9000) talks to Xorg's (local 9001)
    t.row(ms(1), GUI, schema.FD_INFO, aux=5, state=schema.FD_SOCKET, reason=C.AF_UNIX, obj=1, obj2=9000, val=9001)
    t.row(ms(1), XORG, schema.FD_INFO, aux=7, state=schema.FD_SOCKET, reason=C.AF_UNIX, obj=2, obj2=9001, val=9000)
    t.block(GUI, ms(500), "read", "read", obj=5)
    t.wake(XORG, GUI, s(1)).run(GUI, s(1))
    t.block(GUI, s(6), "read", "read", obj=5)
    t.wake(XORG, GUI, s(6.1)).run(GUI, s(6.1))
    t.block(GUI, s(6.2), "poll", "poll", obj=5)

    t.syscall(SHELL, ms(2), "read", obj=255, ret=100)
    at = ms(10)
    while at < s(8):
        t.block(SHELL, at, "child", "wait4")
        t.wake(SERVER, SHELL, at + ms(10)).run(SHELL, at + ms(10))
        at += ms(12)
    t.block(SHELL, s(8.5), "child", "wait4")
    t.wake(SERVER, SHELL, s(11.5)).run(SHELL, s(11.5))

    for k in range(4):
        t.block(TICKER, s(0.1 + 2.6 * k), "sleep", "clock_nanosleep")
        t.timer_wake(TICKER, s(2.6 + 2.6 * k))

    for k in range(20):
        t.block(LOOP, ms(100 + 250 * k), "poll", "epoll_wait", obj=3)
        t.wake(SERVER, LOOP, ms(300 + 250 * k)).run(LOOP, ms(300 + 250 * k))
    t.futex_wait(LOOP, s(6), 0x7000)
    t.wake(SERVER, LOOP, s(10)).run(LOOP, s(10))
    t.block(LOOP, s(10.1), "poll", "epoll_wait", obj=3)

    t.block(CLIENT, s(4), "read", "read", obj=4)
    t.wake(SERVER, CLIENT, s(11)).run(CLIENT, s(11))
    t.block(CLIENT, s(11.1), "poll", "poll", obj=4)

    at = ms(5)
    while at < s(10):
        t.block(SLEEPER, at, "sleep", "clock_nanosleep")
        t.timer_wake(SLEEPER, at + ms(10))
        at += ms(11)
    t.block(SLEEPER, s(10.5), "poll", "poll")
    return t.build(trace_end=END)


def test_rank_as_a_user_would():
    g = machine()
    ranked = C.rank(g, H.main_thread_hangs(g, event_loops_only=False))
    got = [(g.comm(c.hang.utid), c.hang.block_type, c.tier) for c in ranked if c.tier <= 1]
    # tier 2: the rest (Xorg and server on CPU throughout, client before its read)
    assert {g.comm(c.hang.utid) for c in ranked if c.tier == 2} == {"Xorg", "server", "client"}
    # interactive first (latest end first), then the synchronous wait; no shell, ticker or sleeper
    assert got == [("loop-app", "LongWait", 0), ("gtk-app", "LongRunning", 0), ("client", "LongWait", 1)], got
    assert [c.why for c in ranked[:2]] == ["event loop", "has a window (X / Wayland connection)"]
    assert C.ambiguous(ranked)                  # two interactive threads: show the top three
    assert [g.comm(c.hang.utid) for c in C.top_threads(ranked)] == ["loop-app", "gtk-app", "client"]
    assert H.most_recent_hang(g).pid == LOOP


def test_dropped_and_why():
    g = machine()
    traits = C.Traits(g, socket_paths={})
    why = {}
    for h in H.main_thread_hangs(g, event_loops_only=False):
        tier, reason = C.judge(g, h, traits)
        why.setdefault(g.comm(h.utid), set()).add(reason if tier is None else tier)
    assert why["bash"] == {"a shell waiting for its script, terminal or children"}
    assert why["ticker"] == {"it merely sleeps"}
    assert why["sleeper"] == {"it merely sleeps periodically"}


def test_at_and_a_clear_choice():
    g = machine()
    ranked = C.rank(g, H.main_thread_hangs(g, event_loops_only=False), at=s(5))
    assert [g.comm(c.hang.utid) for c in ranked if c.tier <= 1] == ["gtk-app", "client"]
    assert not C.ambiguous(ranked)              # one interactive thread: no list
    assert H.most_recent_hang(g, at=s(5)).pid == GUI


def test_display_socket_by_path():
    """Without the server's FD_INFO, a peer bound under /tmp/.X11-unix (or to
    wayland-N) on this machine still marks a window."""
    g = machine()
    assert C.display_clients(g, socket_paths={}) == {GUI}
    g.processes[XORG]["name"] = "not-x"
    assert C.display_clients(g, socket_paths={}) == set()
    assert C.display_clients(g, socket_paths={9001: "@/tmp/.X11-unix/X0"}) == {GUI}
    assert C.display_clients(g, socket_paths={9001: "/run/user/0/wayland-1"}) == {GUI}
