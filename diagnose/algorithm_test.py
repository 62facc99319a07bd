"""Algorithm 1 end to end on crafted traces: the cross-process LongWait
scenario, LongRunning slicing, RepeatedYield with and without data flags,
and the no-hang / no-baseline cases."""
import json

import pytest

from support import crafted as C
from support.crafted import Trace, ms, us, s
from argus.diagnose import diagnose, NoHangError, to_json, render_json
from argus.tracer import schema
from argus.diagnose.slice import AutoChooser

APP, DAEMON, HELPER = C.APP, C.DAEMON, C.HELPER


def path_summary(j):
    return [(p["tid"], p["role"], p["edge_in"] and p["edge_in"]["type"], p["depth"]) for p in j["path"]]


def causes(j):
    return [(c["pid"], c["tid"], c["comm"], c["block_type"], c["start_ns"], c["end_ns"], c["depth"], c["primary"])
            for c in j["root_causes"]]


@pytest.fixture(scope="module")
def cross_process():
    t, info = C.client_daemon()
    g = t.build(trace_end=info["trace_end"])
    return g, info, to_json(diagnose(g, APP))


def test_cross_process_spinning(cross_process):
    g, info, j = cross_process
    assert j["schema"] == "argus.diagnosis/1"
    sp = j["spinning"]
    assert {k: sp[k] for k in ("pid", "tid", "comm", "process", "start_ns", "end_ns", "block_type", "kind",
                               "ongoing")} == {
        "pid": APP, "tid": APP, "comm": "app", "process": "app", "start_ns": info["app_wait_start"],
        "end_ns": info["app_wait_end"], "block_type": "LongWait", "kind": "wait", "ongoing": False}
    assert sp["longest_wait"]["what"] == "read(fd 5)" and sp["longest_wait_share"] == 1.0
    b = sp["baseline"]
    assert (b["tid"], b["same_thread"], b["same_obj"], b["start_ns"]) == \
        (APP, True, True, info["req"][3] + us(30))           # the most recent request before the hang
    assert sp["origin"]["kind"] == "culled" and sp["origin"]["label"] == "timer"
    assert j["queries"] == 0


def test_cross_process_root_causes(cross_process):
    g, info, j = cross_process
    assert causes(j) == [
        (200, DAEMON, "daemond", "LongWait", info["daemon_wait_start"], info["daemon_wait_end"], 1, False),
        (200, HELPER, "helper", "LongRunning", info["daemon_wait_start"], info["daemon_wait_end"], 2, True),
    ]
    d, h = j["root_causes"]
    # found on the hang's own wake-up path (the reply that ended it), not a baseline's
    assert d["why"] == ("LongWait on futex 0x7f0000002000 for 5.000 s "
                        "(on the wake-up path it woke app/100 at +5.000 s)")
    assert h["why"] == ("busy on CPU 99% of the hang (on the wake-up path it woke daemond/200 at +5.000 s); "
                        "work triggered by daemond/200 (wakeup at +15 us); slice reaches back to app/100, "
                        "timer wakeup")
    assert h["origin"]["kind"] == "culled" and h["origin"]["tid"] == APP


def test_cross_process_path(cross_process):
    g, info, j = cross_process
    # the hang's own path first (app <- daemon's reply <- helper <- daemon's request <- app's
    # request), then request 3's, a quick instance, as evidence (via_baseline: what-if, compare)
    own = [(APP, "slice", "program_order", 0), (DAEMON, "slice", "wakeup", 0), (HELPER, "slice", "wakeup", 0),
           (DAEMON, "slice", "wakeup", 0), (APP, "slice", "wakeup", 0)]
    base = [(APP, "baseline", "baseline", 0), (DAEMON, "slice", "wakeup", 0), (HELPER, "slice", "wakeup", 0),
            (DAEMON, "slice", "wakeup", 0), (APP, "slice", "wakeup", 0)]
    assert path_summary(j) == [
        (APP, "spinning", None, 0), *own, *base,
        (DAEMON, "culprit", "culprit", 1),
        (DAEMON, "slice", "program_order", 1), (HELPER, "slice", "wakeup", 1), (DAEMON, "slice", "wakeup", 1),
        (APP, "slice", "wakeup", 1),
        (DAEMON, "baseline", "baseline", 1), (HELPER, "slice", "wakeup", 1), (DAEMON, "slice", "wakeup", 1),
        (APP, "slice", "wakeup", 1),
        (HELPER, "culprit", "culprit", 2), (DAEMON, "slice", "wakeup", 2), (APP, "slice", "wakeup", 2),
    ]
    assert [p["via_baseline"] for p in j["path"][:11]] == [False] * 6 + [True] * 5
    hang = info["hang_req"]
    assert [p["start_ns"] for p in j["path"][2:6]] == [hang + s(5) + us(60), hang + us(45), hang + us(20), hang]
    req3 = info["req"][3]
    # request 3's path: app <- daemon reply <- helper <- daemon request <- app timer wake
    assert [p["start_ns"] for p in j["path"][6:11]] == [
        req3 + us(255 + 25), req3 + us(255 + 5), req3 + us(45), req3 + us(20), req3]
    assert [p["block_type"] for p in j["path"][:6]] == \
        ["LongWait", "LongWait", "LongWait", "LongRunning", "LongWait", "LongWait"]
    assert all(p["edge_in"]["weak"] is False for p in j["path"][1:])
    json.loads(render_json(j))


def test_cross_process_ongoing_at_trace_end():
    t, info = C.client_daemon()
    cut = info["hang_req"] + s(3)
    j = to_json(diagnose(t.build(until=cut), APP))
    sp = j["spinning"]
    assert (sp["start_ns"], sp["end_ns"], sp["ongoing"]) == (info["app_wait_start"], cut, True)
    assert causes(j) == [
        (200, DAEMON, "daemond", "LongWait", info["daemon_wait_start"], cut, 1, False),
        (200, HELPER, "helper", "LongRunning", info["daemon_wait_start"], cut, 2, True),
    ]
    assert j["root_causes"][0]["why"].startswith(
        "LongWait on futex 0x7f0000002000 for 3.000 s, still waiting at trace end")


class NoRecursion(AutoChooser):
    def go_on(self, root_cause):
        self.queries += 1
        return False


def test_chooser_can_stop_recursion():
    t, info = C.client_daemon()
    g = t.build(trace_end=info["trace_end"])
    j = to_json(diagnose(g, APP, chooser=NoRecursion()))
    # daemon found on the hang's path, not recursed into; the helper is on the
    # same path, behind the daemon, and abnormal too: a root cause at depth 1,
    # and the primary one, since it lies further back along causality
    assert [(c["tid"], c["depth"], c["primary"]) for c in j["root_causes"]] == \
        [(DAEMON, 1, False), (HELPER, 1, True)]
    assert j["queries"] == 2
    assert all(p["depth"] == 0 for p in j["path"])


def test_demo_shape_with_weak_condvar_edges():
    t = C.demo_like()
    g = t.build(trace_end=s(8))
    # 4 requests x (daemon -> helper, helper -> daemon), but the very first wake of
    # the helper ends a wait that began before the trace (reason unknown): strong
    assert g.stats["weak_edges"] == 7
    j = to_json(diagnose(g, 100))
    assert j["spinning"]["block_type"] == "LongWait" and j["spinning"]["tid"] == 100
    assert [(c["tid"], c["block_type"], c["depth"], c["primary"]) for c in j["root_causes"]] == \
        [(200, "LongWait", 1, False), (201, "LongRunning", 2, True)]
    assert any(p["edge_in"] and p["edge_in"]["weak"] for p in j["path"])
    assert j["queries"] == 0


def test_long_running_slice_reaches_the_trigger():
    """Xorg (pid 400), woken by a device interrupt, sends an event to the app
    (pid 300), idle in epoll; the app's main thread then runs 3 s."""
    g = C.editor_xorg()
    j = to_json(diagnose(g, 300))
    sp = j["spinning"]
    assert (sp["block_type"], sp["kind"], sp["start_ns"], sp["end_ns"]) == ("LongRunning", "stretch",
                                                                            s(1) + us(20), s(4))
    assert path_summary(j) == [(300, "spinning", None, 0), (400, "slice", "wakeup", 0)]
    assert j["path"][1]["comm"] == "Xorg" and j["path"][1]["start_ns"] == s(1)
    assert sp["origin"]["kind"] == "culled" and sp["origin"]["label"] == "device"
    assert causes(j) == [(300, 300, "editor", "LongRunning", s(1) + us(20), s(4), 0, True)]
    assert j["root_causes"][0]["why"] == \
        "busy on CPU 99% of the hang; work triggered by Xorg/400 (wakeup at +0 ns), device wakeup"


def test_repeated_yield_without_flags_names_a_held_up_thread_of_its_process():
    """A poller that sleeps between tries (timed futex waits, no yields) and
    whose tries name no holder: its process's thread that was busy over the
    hang is the inferred one (weak process_peer).  A poller that yields
    spins on memory instead: itself, with the bp_watch advice."""
    j = to_json(diagnose(C.gil_like(release=False), 10))
    assert j["spinning"]["owner"]["kind"] == "process_peer" and j["spinning"]["owner"]["tid"] == 11
    assert [(c["tid"], c["block_type"], c["depth"], c["primary"]) for c in j["root_causes"]] == \
        [(11, "LongRunning", 1, True)]
    assert "(inferred: a thread of its process held up over the hang" in j["root_causes"][0]["why"]
    j = to_json(diagnose(C.yield_app(flags=False), 600))
    assert [(c["tid"], c["block_type"], c["advice"]) for c in j["root_causes"]] == \
        [(600, "RepeatedYield", None)]          # no stack, no mapping: nothing to name (the why says so)


def test_repeated_yield_without_flags_asks_for_bp_watch():
    g = C.yield_app(flags=False, worker_pid=601)      # no thread of its own process is held up
    j = to_json(diagnose(g, 600))
    sp = j["spinning"]
    assert (sp["block_type"], sp["kind"], sp["yields"]) == ("RepeatedYield", "stretch", 300)
    assert sp["data_flags"] == []
    assert path_summary(j) == [(600, "spinning", None, 0)]
    (rc,) = j["root_causes"]
    assert (rc["tid"], rc["block_type"], rc["depth"], rc["primary"], rc["advice"]) == \
        (600, "RepeatedYield", 0, True, None)
    assert rc["why"] == ("repeated yield: polling a data flag the trace does not name (the trace has no user "
                         "stack of the loop and no mapping of process 600 (`argus start` records both unless "
                         "--no-stacks)) (300 yields, 0 short waits, one every 10.0 ms; syscalls: sched_yield x300, "
                         "epoll_wait x1, futex x1)")
    assert "IMAGE" not in rc["why"] and "SYMBOL" not in rc["why"]


def _poller_exe(tmp_path):
    """tests/programs/split_poll.c built with cc -O1 (a real ELF to analyse)."""
    import os
    import shutil
    import subprocess
    if not shutil.which("cc"):
        pytest.skip("needs cc")
    src = os.path.join(os.path.dirname(__file__), "..", "tests", "programs", "split_poll.c")
    exe = str(tmp_path / "split-poll")
    subprocess.run(["cc", "-O1", "-o", exe, src], check=True)
    return exe


def test_repeated_yield_advice_from_the_executable_mapping(tmp_path):
    """No stack, but the process's executable is mapped: the function that
    calls sched_yield / usleep names the global it tests."""
    exe = _poller_exe(tmp_path)
    j = to_json(diagnose(C.yield_app(flags=False, worker_pid=601, executable=exe), 600))
    (rc,) = j["root_causes"]
    assert rc["advice"] == "bp_watch 600 split-poll split_ready"
    assert rc["why"].startswith("repeated yield: polling a data flag; watch it with bp_watch 600 split-poll "
                                "split_ready (300 yields")
    assert "globals split_wait reads: split_ready, split_polls" in rc["why"]


def test_repeated_yield_advice_says_what_the_mapping_lacks(tmp_path):
    """A mapped executable that is gone, or has no polling function: the
    advice names what is missing instead of a placeholder."""
    gone = str(tmp_path / "gone")
    rc = to_json(diagnose(C.yield_app(flags=False, worker_pid=601, executable=gone), 600))["root_causes"][0]
    assert rc["advice"] is None
    assert f"(no user stack of the loop, and its executable {gone} is not readable here)" in rc["why"]
    true = "/bin/true"
    rc = to_json(diagnose(C.yield_app(flags=False, worker_pid=601, executable=true), 600))["root_causes"][0]
    assert rc["advice"] is None
    assert ("(no user stack of the loop, and no function of true both calls a polling wait (sched_yield, "
            "usleep, poll, ...) and reads a global)") in rc["why"]


def test_repeated_yield_with_flags_finds_the_writer():
    g = C.yield_app(flags=True)
    j = to_json(diagnose(g, 600))
    sp = j["spinning"]
    assert sp["block_type"] == "RepeatedYield"
    assert sp["data_flags"] == [{"addr": 0x6000A0, "reads": 301}]
    assert sp["baseline"]["start_ns"] == s(3) + us(30) and sp["baseline"]["wait_ns"] == ms(2)
    assert path_summary(j) == [
        (600, "spinning", None, 0), (600, "baseline", "baseline", 0), (601, "slice", "data_flag", 0),
        (601, "culprit", "culprit", 1), (600, "slice", "wakeup", 1)]
    assert causes(j) == [(600, 601, "worker", "LongRunning", s(4), s(7) + us(40), 1, True)]
    assert j["root_causes"][0]["why"] == (
        "busy on CPU 99% of the hang (on the baseline path it wrote the data flag ui/600 read at -998.0 ms); "
        "work triggered by ui/600 (wakeup at +10 us), timer wakeup")


def test_no_hang_and_unknown_pid():
    t, info = C.client_daemon(hang_s=0.5)
    g = t.build(trace_end=info["trace_end"])
    with pytest.raises(NoHangError) as e:
        diagnose(g, APP)
    assert str(e.value).startswith("no hang >= 2 s found for the main thread of pid 100 in the trace window [")
    with pytest.raises(NoHangError):
        diagnose(g, APP, threshold_ns=s(10))
    # a lower threshold finds it (and the app's 1 s sleeps: pick the hang by time)
    j = to_json(diagnose(g, APP, at=info["hang_req"] + ms(100), threshold_ns=ms(400)))
    assert [c["tid"] for c in j["root_causes"]] == [DAEMON, HELPER]


def test_long_wait_without_baseline():
    """A single long read: no earlier similar wait.  Resolved in the trace by a
    server thread that was busy: slice from the wait's own wakeup."""
    def trace(resolved):
        t = Trace()
        t.thread(700, 700, "client")
        t.thread(800, 800, "server")
        t.run(800, 0)
        t.run(700, 0).block(700, ms(100), "read", "read", obj=5)
        if resolved:
            t.wake(800, 700, s(3)).run(700, s(3))
        return t.build(trace_end=s(4))

    j = to_json(diagnose(trace(True), 700))
    assert j["spinning"]["baseline"] is None
    assert path_summary(j) == [(700, "spinning", None, 0), (700, "slice", "program_order", 0),
                               (800, "slice", "wakeup", 0), (800, "culprit", "culprit", 1)]
    assert [(c["tid"], c["block_type"], c["depth"]) for c in j["root_causes"]] == [(800, "LongRunning", 1)]

    j = to_json(diagnose(trace(False), 700))
    (rc,) = j["root_causes"]
    assert (rc["tid"], rc["depth"], rc["primary"]) == (700, 0, True)
    assert rc["why"] == ("LongWait on read(fd 5) for 3.900 s, still waiting at trace end; no baseline "
                         "(no similar wait ended quickly by a task's wakeup) and the wait did not end "
                         "with a task's wakeup in the trace")


def test_normal_thread_on_the_path_is_skipped():
    """app (100) -> broker (300, an epoll loop with 10 ms timeouts) -> worker
    (301) -> broker -> app.  During the hang the broker keeps ticking (Normal);
    the worker is busy (LongRunning): the broker is skipped, the worker named."""
    t = Trace()
    t.thread(100, 100, "app")
    t.thread(300, 300, "broker")
    t.thread(300, 301, "worker")
    for k in range(3):
        T = s(1 + k)
        work = s(3) if k == 2 else us(100)
        t.wake(0, 100, T, "hardirq", "timer").run(100, T)
        t.syscall(100, T + us(5), "write", obj=5, ret=8).wake(100, 300, T + us(6))
        t.block(100, T + us(20), "read", "read", obj=5)
        t.run(300, T + us(15), ret=1)
        t.syscall(300, T + us(20), "write", obj=9, ret=8).wake(300, 301, T + us(25))
        t.block(300, T + us(30), "poll", "epoll_wait", obj=3)
        t.run(301, T + us(35), ret=8)
        X = T + us(35) + work
        if k == 2:
            t.busy(301, T + us(35), X, slice_ns=ms(10), gap_ns=us(50))
            tick = T + ms(10)
            while tick < X - ms(10):              # the broker's idle epoll timeouts
                t.wake(0, 300, tick, "hardirq", "timer").run(300, tick)
                t.block(300, tick + us(5), "poll", "epoll_wait", obj=3)
                tick += ms(10)
        t.syscall(301, X, "write", obj=9, ret=8).wake(301, 300, X + us(2))
        t.block(301, X + us(5), "read", "read", obj=8)
        t.run(300, X + us(4), ret=1)
        t.syscall(300, X + us(8), "write", obj=6, ret=8).wake(300, 100, X + us(10))
        t.block(300, X + us(12), "poll", "epoll_wait", obj=3)
        t.run(100, X + us(12), ret=8)
        t.block(100, X + us(20), "sleep", "nanosleep")
    g = t.build(trace_end=s(5))
    j = to_json(diagnose(g, 100))
    own = [p for p in j["path"] if p["depth"] == 0 and not p["via_baseline"]]
    assert [p["tid"] for p in own] == [100, 100, 300, 301, 300, 100]
    assert [p["block_type"] for p in own][2:4] == ["Normal", "LongRunning"]
    assert [(c["tid"], c["block_type"], c["depth"], c["primary"]) for c in j["root_causes"]] == \
        [(301, "LongRunning", 1, True)]


def test_long_wait_on_the_kernel():
    """Reads from a disk: every wait ends by a BLOCK softirq, the long one too."""
    t = Trace()
    t.thread(900, 900, "indexer")
    t.run(900, 0).block(900, ms(1), "poll", "epoll_wait", obj=3)
    for k in range(3):
        at = s(1 + k)
        t.wake_and_run(0, 900, at - ms(1), "hardirq", "timer")
        t.block(900, at, "io", "pread64", obj=7, state="blocked_io")
        end = at + (s(2.5) if k == 2 else ms(2))
        t.wake_and_run(0, 900, end, "softirq", "block")
        t.block(900, end + ms(1), "poll", "epoll_wait", obj=3)
    g = t.build(trace_end=s(6))
    j = to_json(diagnose(g, 900))
    (rc,) = j["root_causes"]
    assert rc["why"] == ("LongWait on pread64 for 2.500 s; no baseline (no similar wait ended quickly by a "
                         "task's wakeup) and the wait did not end with a task's wakeup in the trace; such waits "
                         "end by kernel wakeups (block x3): the thread waits on the kernel or a device, not on "
                         "another task")


# --- ownership: who holds what the hung thread polls or waits for ---

def lock_poller_json(**kw):
    t, info = C.lock_poller(**kw)
    g = t.build(trace_end=info["trace_end"])
    return g, info, to_json(diagnose(g, C.POLLER))


@pytest.mark.parametrize("holder, block_type, start", [("wait", "LongWait", ms(1)), ("busy", "LongRunning", s(0.5))])
def test_repeated_yield_follows_the_lock_holder(holder, block_type, start):
    g, info, j = lock_poller_json(holder=holder)
    sp = j["spinning"]
    assert (sp["block_type"], sp["data_flags"]) == ("RepeatedYield", [])
    assert (sp["owner"]["tid"], sp["owner"]["kind"], sp["owner"]["weak"], sp["owner"]["tries"]) == \
        (C.HOLDER, "file_lock", False, 300)
    assert path_summary(j)[:3] == [(C.POLLER, "spinning", None, 0), (C.HOLDER, "owner", "ownership", 0),
                                   (C.HOLDER, "culprit", "culprit", 1)]
    assert j["path"][1]["edge_in"] == {"type": "ownership", "weak": False, "owner_kind": "file_lock"}
    (rc,) = j["root_causes"]
    assert (rc["tid"], rc["block_type"], rc["depth"], rc["primary"], rc["advice"]) == \
        (C.HOLDER, block_type, 1, True, None)
    assert rc["start_ns"] == start
    assert "(holds what poller/700 waits for: it holds a file lock on inode 16962 that was tried; " \
           "300 tries point at it, last at +2.993 s, strong)" in rc["why"]


def test_repeated_yield_takes_the_strongest_holder_under_auto():
    g, info, j = lock_poller_json(holder="wait", other="channel")
    assert [(c["tid"], c["block_type"]) for c in j["root_causes"]] == [(C.HOLDER, "LongWait")]
    # both weak: most tries still wins over the busier thread
    g, info, j = lock_poller_json(holder="wait", strong=False, other="channel")
    assert [(c["tid"], c["block_type"]) for c in j["root_causes"]] == [(C.HOLDER, "LongWait")]
    assert j["path"][1]["edge_in"]["weak"] is True


def test_repeated_yield_with_a_holder_that_ran_normally():
    g, info, j = lock_poller_json(holder="idle")
    assert path_summary(j) == [(C.POLLER, "spinning", None, 0), (C.HOLDER, "owner", "ownership", 0)]
    (rc,) = j["root_causes"]
    assert (rc["tid"], rc["block_type"], rc["depth"]) == (C.POLLER, "RepeatedYield", 0)
    assert rc["why"].endswith("holder/800 holds what it waits for (file_lock) but ran normally during the hang")


def futex_victim(owner=None, baseline=True):
    """victim (pid 50) takes mutex M: with `baseline`, a 1 ms wait at 1 s that
    releaser 52 ends (futex wake); then at 2 s a wait still going at trace end
    (6 s).  sleeper 51 sleeps in nanosleep from 0.5 s to 5.9 s.  owner:
    "strong" (M's owner field names 51) or "weak" (a channel) adds the edge
    51 -> victim at 2 s."""
    M = 0xD00D
    t = Trace()
    t.thread(50, 50, "victim").thread(50, 51, "sleeper").thread(50, 52, "releaser")
    t.run(51, 0).block(51, s(0.5), "sleep", "nanosleep")
    t.timer_wake(51, s(5.9)).block(51, s(5.9) + us(10), "poll", "epoll_wait", obj=3)
    t.run(52, 0).block(52, ms(1), "poll", "epoll_wait", obj=4)
    t.run(50, 0).block(50, ms(1), "poll", "epoll_wait", obj=5)
    if baseline:
        t.timer_wake(52, s(1) - us(50))
        t.timer_wake(50, s(1) - us(100)).futex_wait(50, s(1), M)
        t.futex_wake(52, s(1) + ms(1), M).wake(52, 50, s(1) + ms(1) + us(1)).run(50, s(1) + ms(1) + us(2))
        # a blocking read, not its idle loop wait (an idle loop wait is never a culprit: diagnose/waits.py)
        t.block(52, s(1) + ms(1) + us(5), "read", "read", obj=4)
        t.block(50, s(1) + ms(1) + us(10), "poll", "epoll_wait", obj=5)
    t.timer_wake(50, s(2) - us(10)).futex_wait(50, s(2), M)
    if owner:
        t.own(51, 50, s(2), "futex_owner" if owner == "strong" else "futex_channel", weak=owner == "weak", obj=M)
    return t.build(trace_end=s(6))


@pytest.mark.parametrize("owner, baseline, roots", [
    ("strong", True, [(51, "LongWait")]),       # the kernel named the holder: before the baseline
    ("weak", True, [(52, "LongWait")]),         # an inferred holder: the baseline (releaser) first
    ("weak", False, [(51, "LongWait")]),        # no baseline: the inferred holder
    (None, True, [(52, "LongWait")]),
])
def test_ongoing_long_wait_follows_an_ownership_edge(owner, baseline, roots):
    j = to_json(diagnose(futex_victim(owner, baseline), 50))
    assert j["spinning"]["block_type"] == "LongWait" and j["spinning"]["ongoing"]
    assert [(c["tid"], c["block_type"]) for c in j["root_causes"] if c["depth"] == 1] == roots
    assert (j["path"][1]["role"] == "owner") == (roots[0][0] == 51)
    if roots[0][0] == 51:
        assert j["root_causes"][0]["why"].startswith(
            "LongWait on nanosleep for 5.400 s (holds what victim/50 waits for: "
            + ("the futex 0xd00d names it as owner" if owner == "strong"
               else "it woke waiters of futex 0xd00d before (inferred)"))


def test_a_wait_ended_by_a_wakeup_ignores_ownership():
    t = Trace()
    t.thread(60, 60, "victim").thread(61, 61, "holder").thread(62, 62, "waker")
    t.run(61, 0).block(61, ms(1), "sleep", "nanosleep")
    t.run(62, 0)
    t.run(60, 0).futex_wait(60, s(1), 0xE0)
    t.own(61, 60, s(1), "futex_owner", obj=0xE0)
    t.futex_wake(62, s(4), 0xE0).wake(62, 60, s(4) + us(1)).run(60, s(4) + us(2))
    g = t.build(trace_end=s(5))
    j = to_json(diagnose(g, 60))
    assert [c["tid"] for c in j["root_causes"]] == [62] and j["spinning"]["owner"] is None


def test_polled_addresses_use_the_futex_numbers_the_trace_taught():
    """A trace from another architecture: futex is nr 98 there.  The switch-outs
    with wait reason futex teach it (g.roles); the advice lists the address."""
    from argus.diagnose.algorithm import polled_addresses
    FUTEX_98 = 98
    t = Trace()
    t.thread(600, 600, "ui")
    t.run(600, 0).block(600, ms(1), "poll", "epoll_wait", obj=3)
    t.timer_wake(600, s(1))
    now = s(1) + us(10)
    while now < s(4):
        t.block(600, now, "futex", FUTEX_98, obj=0xBEEF, aux=C.FUTEX_WAIT_PRIVATE)
        t.timer_wake(600, now + ms(1), ret=C.ETIMEDOUT)
        now += ms(2)
    g = t.build(trace_end=s(5))
    assert FUTEX_98 in g.roles.futex_nrs
    assert polled_addresses(g, g.utid_of_tid(600), s(1), s(4)) == [0xBEEF]
    assert "addresses polled 0xbeef" in to_json(diagnose(g, 600))["root_causes"][0]["why"]


def test_repeated_yield_on_a_gil_like_lock_names_the_thread_that_released_it():
    j = to_json(diagnose(C.gil_like(), 10))
    assert j["spinning"]["block_type"] == "RepeatedYield"
    assert (j["spinning"]["owner"]["tid"], j["spinning"]["owner"]["release"]) == (11, True)
    assert path_summary(j)[:3] == [(10, "spinning", None, 0), (11, "owner", "ownership", 0),
                                   (11, "culprit", "culprit", 1)]
    (rc,) = j["root_causes"]
    assert (rc["tid"], rc["block_type"], rc["primary"]) == (11, "LongRunning", True)
    assert "(holds what main/10 polls: it released futex 0x7000, which main/10 waited on, at +3.000 s " \
           "(inferred))" in rc["why"]
    j = to_json(diagnose(C.gil_like(release=False), 10))     # never released: its busy peer, inferred
    assert [(c["tid"], c["block_type"]) for c in j["root_causes"]] == [(11, "LongRunning")]
    j = to_json(diagnose(C.gil_like(release=False, worker_pid=11), 10))
    assert [(c["tid"], c["block_type"]) for c in j["root_causes"]] == [(10, "RepeatedYield")]
    assert j["root_causes"][0]["advice"] is None and "IMAGE" not in j["root_causes"][0]["why"]


# --- synchronous waits made with event-loop syscalls (waits.py) ---

def _client_server(**kw):
    import os
    import sys
    sys.path.insert(0, os.path.dirname(__file__))
    from waits_test import client_server
    return client_server(**kw)


def test_pending_poll_slices_into_the_callee_without_a_wakeup_edge():
    """The client's poll() is still waiting at trace end while the server
    computes: no wakeup edge ended it, the closure's path names the server."""
    t, tm = _client_server()
    g = t.build(until=tm["req"] + s(2.5))
    j = to_json(diagnose(g, 100))
    assert j["spinning"]["block_type"] == "LongWait" and j["spinning"]["ongoing"]
    assert j["spinning"]["wait_model"]["kind"] == "pending"
    assert [(p["tid"], p["role"]) for p in j["path"]][:3] == [(100, "spinning"), (200, "slice"), (200, "culprit")]
    assert j["spinning"]["origin"]["kind"] == "pending"
    (rc,) = [c for c in j["root_causes"] if c["primary"]]
    assert (rc["tid"], rc["block_type"], rc["depth"]) == (200, "LongRunning", 1)


def test_sync_poll_behind_a_nested_wait_names_who_released_it():
    """The server waits for a lock in a nested epoll set until pid 300 wakes
    it: the client's LongWait slices from the answer back into the server
    and on to 300 (sleeping); the server's nested wait is not idle."""
    t, tm = _client_server(server_lock=True)
    g = t.build(trace_end=s(6))
    j = to_json(diagnose(g, 100))
    assert j["spinning"]["wait_model"]["kind"] == "sync"
    tids = [c["tid"] for c in j["root_causes"]]
    assert 200 in tids and 300 in tids
    (rc,) = [c for c in j["root_causes"] if c["primary"]]
    assert (rc["tid"], rc["block_type"]) == (300, "LongWait")


def test_work_that_moves_between_threads_is_one_long_running_cause():
    """Issue 22, item 3: a server whose handler runs on a user-space
    scheduler (Go's Ms): the computation hops between two OS threads every
    20 ms, each parking in a short futex wait while the other runs.  Each
    thread alone looks like polling; together the process was busy the
    whole hang: one LongRunning root cause standing for the process."""
    t = Trace()
    t.thread(100, 100, "client")
    t.thread(200, 200, "server")
    t.thread(200, 201, "server")
    t.run(100, 0).run(200, 0).run(201, 0)
    t.block(201, ms(1), "futex", "futex", obj=0x5000)
    t.block(100, ms(10), "read", "read", obj=4)
    x, turn = ms(10), 0
    while x < s(3):
        run, park = (200, 201) if turn == 0 else (201, 200)
        t.wake(park, run, x).run(run, x)                   # the other M takes the goroutine
        t.block(park, x + us(5), "futex", "futex", obj=0x5000)
        x += ms(20)
        turn ^= 1
    t.syscall(run, x, "write", obj=9).wake(run, 100, x + us(5)).run(100, x + us(5), ret=1)
    g = t.build(trace_end=s(3.5))
    j = to_json(diagnose(g, 100))
    (rc,) = j["root_causes"]
    assert (rc["pid"], rc["block_type"], rc["primary"]) == (200, "LongRunning", True)
    assert "the work moves between 2 threads of its process" in rc["why"]


def test_a_launcher_and_what_lies_behind_it_are_no_causes():
    """`bash -c 'server & client'`, beside another job of the same shell:
    the client's wait ends with the server's reply, the walk goes back to
    the fork by bash and must stop there: bash (waiting in wait4) and the
    other job (busy) are not causes of the client's hang (issue 22, item 7)."""
    SH, SRV, CLI, JOB = 5, 6, 7, 8
    t = Trace()
    t.thread(SH, SH, "bash")
    t.run(SH, 0)
    t.fork(SH, JOB, ms(1), "job", child_pid=JOB)
    t.run(JOB, ms(1))
    t.busy(JOB, ms(1), s(4), slice_ns=ms(10), gap_ns=ms(1))
    t.fork(SH, SRV, ms(2), "server", child_pid=SRV)
    t.fork(SH, CLI, ms(3), "client", child_pid=CLI)
    t.block(SH, ms(4), "child", "wait4")
    t.run(SRV, ms(2)).block(SRV, ms(5), "read", "read", obj=3)
    t.run(CLI, ms(3)).syscall(CLI, ms(10), "write", obj=3).wake(CLI, SRV, ms(11))
    t.block(CLI, ms(12), "read", "read", obj=3)
    t.run(SRV, ms(11))
    t.busy(SRV, ms(11), s(3), slice_ns=ms(10), gap_ns=ms(1))
    t.syscall(SRV, s(3), "write", obj=3).wake(SRV, CLI, s(3) + us(5)).run(CLI, s(3) + us(5), ret=1)
    g = t.build(trace_end=s(3.5))
    j = to_json(diagnose(g, CLI))
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(SRV, "LongRunning", True)]


def _scheduler_relay(relay_yields=False):
    """A user-space scheduler's shape (Go): main (10) parks on futex 0xA
    from 1 ms; worker 11 computes until 3 s; spare thread 12 is woken by
    the worker every 10 ms, runs 10 us and parks again (a relay); at 3 s
    the worker wakes 12, which wakes main."""
    t = Trace()
    t.thread(10, 10, "main").thread(10, 11, "worker").thread(10, 12, "spare")
    t.run(10, 0).run(11, 0).run(12, 0)
    t.futex_wait(12, us(500), 0xC)
    t.futex_wait(10, ms(1), 0xA)
    t.busy(11, 0, s(3), slice_ns=ms(10), gap_ns=us(20))
    for k in range(1, 300):
        at = k * ms(10) + us(30)
        t.futex_wake(11, at, 0xC).wake(11, 12, at).run(12, at + us(5))
        if relay_yields:
            t.yield_(12, at + us(8))
        t.futex_wait(12, at + us(15), 0xC)
    t.futex_wake(11, s(3) + us(30), 0xC).wake(11, 12, s(3) + us(30)).run(12, s(3) + us(35))
    t.futex_wake(12, s(3) + us(45), 0xA).wake(12, 10, s(3) + us(45)).run(10, s(3) + us(50))
    t.futex_wait(12, s(3) + us(60), 0xC)
    t.block(10, s(3) + ms(1), "poll", "epoll_wait", obj=3)
    return t.build(trace_end=s(4))


def test_a_relay_is_passed_over_and_the_worker_behind_it_named():
    j = to_json(diagnose(_scheduler_relay(), 10))
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(11, "LongRunning", True)]


def test_signal_wait_with_no_sender_yet_follows_a_held_up_thread_of_its_process():
    """main (10) waits in rt_sigtimedwait from 1 ms to trace end; thread 11
    sleeps over the whole hang (it sends the signal after), thread 12 idles
    in its event loop: the sleeper is the inferred holder."""
    t = Trace()
    t.thread(10, 10, "main").thread(10, 11, "sender").thread(10, 12, "loop")
    t.run(10, 0).run(11, 0).run(12, 0)
    t.block(12, us(100), "poll", "epoll_wait", obj=3)
    t.block(11, us(500), "sleep", "nanosleep")
    t.block(10, ms(1), "syscall", "rt_sigtimedwait")
    g = t.build(until=s(3))
    j = to_json(diagnose(g, 10))
    assert j["spinning"]["owner"]["kind"] == "process_peer"
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(11, "LongWait", True)]
    assert "may hold the signal, which main/10 waits for" in j["root_causes"][0]["why"]


def _semaphore_posted_by_an_io_thread(loop=True):
    """main (10) waits from 1 ms to trace end on a semaphore (a futex with
    no owner); its I/O thread (12) sleeps in epoll_wait on socket fd 9 all
    along (an event loop's wait), and the other end of that socket is
    process 20's, which computes over the whole hang: the I/O thread posts
    the semaphore once 20 answers.  With `loop` False thread 12 is not
    there."""
    from graphbuild.heuristics_test import fd_info
    t = Trace()
    t.thread(10, 10, "main").thread(20, 20, "server")
    if loop:
        t.thread(10, 12, "io")
    for tid in (10, 20) + ((12,) if loop else ()):
        t.run(tid, 0)
    if loop:
        fd_info(t, 12, us(90), 9, schema.FD_SOCKET, 101, 101, 102)
        t.block(12, us(100), "poll", "epoll_wait", obj=9)
    fd_info(t, 20, us(90), 4, schema.FD_SOCKET, 102, 102, 101)
    t.busy(20, us(200), s(3))
    t.futex_wait(10, ms(1), 0xF00)
    return t.build(until=s(3))


def test_with_no_thread_held_up_an_event_loop_asleep_all_along_is_followed():
    j = to_json(diagnose(_semaphore_posted_by_an_io_thread(), 10))
    assert j["spinning"]["tid"] == 10 and j["spinning"]["owner"]["kind"] == "process_peer"
    primary = [c for c in j["root_causes"] if c["primary"]]
    assert [(c["tid"], c["block_type"]) for c in primary] == [(20, "LongRunning")], j["root_causes"]
    # without the I/O thread nothing in the process could post it: the wait is all there is
    j = to_json(diagnose(_semaphore_posted_by_an_io_thread(loop=False), 10))
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(10, "LongWait", True)]


def test_an_event_loop_that_waited_for_the_waiter_is_not_its_poster():
    """worker (11) sleeps on an Event (a futex wait that its timeout ends at
    3 s), then writes to the socket its process's I/O thread (12) sleeps on
    in its loop wait all along.  The I/O thread waited for the worker, so it
    posts nothing the worker waits for: the worker's timed sleep is the end
    of the chain."""
    t = Trace()
    t.thread(10, 10, "main").thread(10, 11, "worker").thread(10, 12, "io")
    for tid in (10, 11, 12):
        t.run(tid, 0)
    t.fd_info(12, us(90), 9, schema.FD_SOCKET, 101, 102)
    t.block(12, us(100), "poll", "epoll_wait", obj=9)
    t.futex_wait(11, us(200), 0xE0)
    t.exit(10, us(300))
    t.timer_wake(11, s(3), ret=C.ETIMEDOUT)
    t.fd_info(11, s(3) + us(20), 4, schema.FD_SOCKET, 102, 101)
    t.syscall(11, s(3) + us(20), "write", obj=4)
    t.wake(11, 12, s(3) + us(25)).run(12, s(3) + us(30))
    t.block(11, s(3) + us(40), "futex", "futex", obj=0xE1)
    g = t.build(until=s(4))
    j = to_json(diagnose(g, 10, tid=11))
    assert j["spinning"]["tid"] == 11
    assert 12 not in [c["tid"] for c in j["root_causes"]], j["root_causes"]


def _future_handed_to_a_worker(hand_off=True):
    """main (10) hands a task to its pool worker (11: it wakes it on the
    pool's queue, 0xE) and waits for the future (0xA) from 1 ms to trace
    end; the worker waits on a condition variable (0xB) that thread 12 will
    signal; 12 computes until 1.5 ms, then sleeps on an Event (0xC).  Every wait
    is still going on and has no owner.  With `hand_off` False the worker
    was woken by 12, not by main."""
    t = Trace()
    t.thread(10, 10, "main").thread(10, 11, "pool").thread(10, 12, "timer")
    for tid in (10, 11, 12):
        t.run(tid, 0)
    t.busy(12, 0, ms(1.5))
    t.futex_wait(12, ms(1.5), 0xC)
    t.futex_wait(11, us(50), 0xE)
    waker = 10 if hand_off else 12
    at = ms(1) if hand_off else ms(0.85)
    t.futex_wake(waker, at, 0xE).wake(waker, 11, at).run(11, at + us(5))
    t.futex_wait(11, at + us(30), 0xB)
    t.futex_wait(10, ms(1) + us(10), 0xA)
    return t.build(until=s(3))


def test_a_thread_the_waiter_handed_work_to_comes_first_among_its_peers():
    j = to_json(diagnose(_future_handed_to_a_worker(), 10))
    assert [(c["tid"], c["depth"], c["primary"]) for c in j["root_causes"]] == \
        [(11, 1, False), (12, 2, True)], j["root_causes"]
    # no hand-off: the busier peer first, as before (then the worker, deepest)
    j = to_json(diagnose(_future_handed_to_a_worker(hand_off=False), 10))
    assert [(c["tid"], c["depth"], c["primary"]) for c in j["root_causes"]] == \
        [(12, 1, False), (11, 2, True)], j["root_causes"]


def test_a_device_paced_loop_is_named_without_flag_advice():
    """main (10) waits for a pipe its child (20) fills once its fsync loop is
    done: 3 s of short fsync waits, each ended by the disk's interrupt.  The
    child waits on the device: named, no bp_watch advice, and its loop is not
    searched for a holder."""
    t = Trace()
    t.thread(10, 10, "main").thread(10, 11, "other")
    t.run(10, 0).run(11, 0)
    t.block(11, us(100), "futex", "futex", obj=0x99)
    t.fd_info(10, ms(1), 3, "pipe", 4545)
    t.fork(10, 20, ms(2), "main", child_pid=20)
    t.run(20, ms(2))
    t.block(10, ms(5), "read", "read", obj=3)
    now = ms(10)
    while now < s(3):
        t.syscall(20, now, "write", obj=4)
        t.block(20, now + us(20), "syscall", "fsync", obj=4)
        t.wake(0, 20, now + us(120), "softirq", "block").run(20, now + us(125))
        now += us(200)
    g = t.build(until=s(3))
    j = to_json(diagnose(g, 10))
    (rc,) = j["root_causes"]
    assert (rc["tid"], rc["block_type"], rc["advice"]) == (20, "RepeatedYield", None)
    assert rc["why"].startswith("repeated short waits that the kernel ended, not a task: paced by a device")
    assert [p["tid"] for p in j["path"]] == [10, 20, 20]


def test_a_device_paced_peer_comes_before_a_busier_one():
    """main (10) waits in rt_sigtimedwait from 1 ms to trace end (no sender
    named); thread 11 computes over the whole hang, thread 12 loops on
    fsync (short waits the disk's interrupt ends).  Both are held up; the
    one that waits on a device, downstream like a LongWait, is the inferred
    holder, not the busier one."""
    t = Trace()
    t.thread(10, 10, "main").thread(10, 11, "busy").thread(10, 12, "syncer")
    t.run(10, 0).run(11, 0).run(12, 0)
    t.block(10, ms(1), "syscall", "rt_sigtimedwait")
    now = ms(2)
    while now < s(3):
        t.syscall(12, now, "write", obj=4)
        t.block(12, now + us(20), "syscall", "fsync", obj=4)
        t.wake(0, 12, now + us(120), "softirq", "block").run(12, now + us(125))
        now += us(200)
    g = t.build(until=s(3))
    j = to_json(diagnose(g, 10))
    assert j["spinning"]["owner"]["kind"] == "process_peer"
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(12, "RepeatedYield", True)]


def _go_process(pid, threads):
    """A Trace with a Go process's Ms ((tid, name)...) running from 0, and
    go(at, tid, kind, gid): a GO_* row of goroutine gid on M tid."""
    t = Trace()
    for tid, name in threads:
        t.thread(pid, tid, name)
        t.run(tid, 0)

    def go(at, tid, kind, gid):
        t.row(at, tid, kind, obj=gid, obj2=0xC000000999, cpu=0)
    return t, go


def _go_disk_loop_hands_over(fsync=True, signal=False):
    """A Go process: the main goroutine G0, locked to M0, parks at 1 ms and
    M0 sleeps in its futex until 3 s.  G1 (not locked) parked at 1 ms on
    M1.  M2 runs G2, which loops write + fsync from 2 ms to 3 s (each
    fsync ended by the disk's interrupt; fsync=False: it polls in 1 ms sleeps),
    then readies G1 there; M2 runs G1, which readies G0 and wakes M0.
    signal: G0 waits for a signal (signal.Notify) and the loop ends with M2
    sending it; the kernel delivers it to M0 (its futex returns
    -ERESTARTSYS), whose handler wakes M1, where the runtime's signal
    receiver G1 sleeps (not parked); G1 readies G0 and M0 runs it."""
    P, M0, M1, M2 = 500, 500, 501, 502
    G0, G1, G2 = 0xC000000100, 0xC000000200, 0xC000000300
    t, go = _go_process(P, ((M0, "main"), (M1, "m1"), (M2, "m2")))
    go(ms(0.1), M0, schema.GO_EXECUTE, G0)
    go(ms(0.2), M1, schema.GO_EXECUTE, G1)
    go(ms(0.3), M2, schema.GO_EXECUTE, G2)
    if not signal:
        go(ms(1), M1, schema.GO_PARK, G1)
    t.futex_wait(M1, ms(1.01), 0x8000)
    go(ms(1), M0, schema.GO_PARK, G0)
    t.futex_wait(M0, ms(1.01), 0x7000)
    now, end = ms(2), s(3)
    while now < end:
        if fsync:
            t.syscall(M2, now, "write", obj=4)
            t.block(M2, now + us(20), "syscall", "fsync", obj=4)
            t.wake(0, M2, now + us(120), "softirq", "block").run(M2, now + us(125))
            now += us(200)
        else:
            t.block(M2, now + us(20), "sleep", "nanosleep")
            t.timer_wake(M2, now + ms(1))
            now += ms(1.1)
    if signal:
        t.wake(M2, M0, end + us(10))
        t.run(M0, end + us(30), ret=-512)
        t.futex_wake(M0, end + us(40), 0x8000)
        t.wake(M0, M1, end + us(40))
        t.preempt(M0, end + us(50))
        t.run(M1, end + us(50))
        go(end + us(60), M1, schema.GO_READY, G0)
        t.futex_wait(M1, end + us(70), 0x8000)
        t.run(M0, end + us(80))
        go(end + us(90), M0, schema.GO_EXECUTE, G0)
        t.preempt(M0, end + ms(100))
        return t.build(trace_end=end + ms(200)), P, M2
    go(end + us(10), M2, schema.GO_READY, G1)
    go(end + us(20), M2, schema.GO_EXECUTE, G1)
    go(end + us(30), M2, schema.GO_READY, G0)
    t.futex_wake(M2, end + us(40), 0x7000)
    t.wake(M2, M0, end + us(40))
    t.run(M0, end + us(100))
    go(end + us(110), M0, schema.GO_EXECUTE, G0)
    t.preempt(M0, end + ms(100))
    return t.build(trace_end=end + ms(200)), P, M2


def test_an_m_paced_by_a_device_stands_for_its_disk_loop_not_a_goroutine_it_ran_last():
    """M2 spent the hang in G2's fsync loop (device-paced: the disk ended its
    short waits, not hand-offs) and ran G1, which had parked for 3 s, only to
    hand the result on: M2 is named for the loop (RepeatedYield), not for
    G1's wait.  An M whose short waits a timer ended (a poller's sleeps, not
    a device) is still named for G1's wait."""
    g, pid, m2 = _go_disk_loop_hands_over()
    j = to_json(diagnose(g, pid))
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(m2, "RepeatedYield", True)]
    assert j["root_causes"][0]["why"].startswith("repeated short waits that the kernel ended")
    g, pid, m2 = _go_disk_loop_hands_over(fsync=False)
    j = to_json(diagnose(g, pid))
    assert [(c["tid"], c["block_type"]) for c in j["root_causes"] if c["primary"]] == [(m2, "LongWait")]


def test_the_sender_of_a_signal_the_main_m_caught_is_named_not_the_signal_receiver():
    """M2's fsync loop ends with a signal that the kernel delivers to M0
    itself (its futex wait returns -ERESTARTSYS): M0's handler wakes the
    runtime's signal receiver on M1, which readies G0 on M0.  The signal
    ended M0's wait: M2 is named for its loop, not M1 (asleep all along,
    and woken by M0's own handler: a cycle)."""
    g, pid, m2 = _go_disk_loop_hands_over(signal=True)
    j = to_json(diagnose(g, pid))
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(m2, "RepeatedYield", True)]


def _flock_held_by_its_own_process(go_rows=True):
    """Process 500: M0 (the main thread) ran goroutine G1 at 1 ms, which took
    flock on fd 3 of inode 77 there and parked; at 2 ms M0, running G0,
    blocks in flock on fd 5 of the same file until trace end, and the
    kernel names process 500 as the holder.  M1 computes over the hang; M2
    runs G2, which loops write + fsync.
    go_rows=False: the same rows with no goroutine in sight (a C program)."""
    P, M0, M1, M2 = 500, 500, 501, 502
    G0, G1, G2 = 0xC000000100, 0xC000000200, 0xC000000300

    def go(at, tid, kind, gid):
        if go_rows:
            t.row(at, tid, kind, obj=gid, obj2=0xC000000999, cpu=0)
    t = Trace()
    for tid, name in ((M0, "main"), (M1, "busy"), (M2, "m2")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    go(ms(0.5), M0, schema.GO_EXECUTE, G1)
    go(ms(0.6), M2, schema.GO_EXECUTE, G2)
    t.syscall(M0, ms(1), "flock", aux=2, obj=3, obj2=77)
    t.row(ms(1), M0, schema.FILE_LOCK, aux=3, state=schema.LOCK_FLOCK, reason=schema.LOCK_WRITE, obj=77)
    go(ms(1.1), M0, schema.GO_PARK, G1)
    go(ms(1.2), M0, schema.GO_EXECUTE, G0)
    t.row(ms(2), M0, schema.SYSCALL_ENTER, nr=73, aux=2, obj=5, obj2=77)
    t.row(ms(2), M0, schema.FILE_LOCK, aux=5, state=schema.LOCK_FLOCK, reason=schema.LOCK_WRITE, peer_tid=1,
          obj=77, peer_pid=P, irq=schema.LOCK_WRITE)
    t.block(M0, ms(2), "syscall", "flock", enter=False)
    now, end = ms(3), s(3)
    while now < end:
        t.syscall(M2, now, "write", obj=4)
        t.block(M2, now + us(20), "syscall", "fsync", obj=4)
        t.wake(0, M2, now + us(120), "softirq", "block").run(M2, now + us(125))
        now += us(200)
    return t.build(trace_end=end), P, M2


def test_a_file_lock_its_own_go_process_holds_is_a_goroutines():
    """The lock table keeps M0 as the holder (it took the lock for G1): in a
    Go program the lock is a goroutine's, so the walk takes the process's
    held-up threads, the device-paced one first.  Without goroutines the
    rule is off: nothing names a holder and M0 is its own answer."""
    g, pid, m2 = _flock_held_by_its_own_process()
    j = to_json(diagnose(g, pid))
    assert j["spinning"]["owner"]["kind"] == "goroutine_lock"
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(m2, "RepeatedYield", True)]
    assert "may hold the file lock on inode 77 that main/500 waits for" in j["root_causes"][0]["why"]
    g, pid, m2 = _flock_held_by_its_own_process(go_rows=False)
    j = to_json(diagnose(g, pid))
    assert [(c["tid"], c["depth"]) for c in j["root_causes"]] == [(pid, 0)]


def _go_eventfd_wait(go_rows=True):
    """Process 500: M0 (the main thread) blocks in read on eventfd fd 3 from
    2 ms to trace end; M1 computes over the hang; M2 runs goroutine G2,
    which parks at 1 ms, and sleeps in its futex since.  Nobody in another
    process has the eventfd.  go_rows=False: no goroutine in sight."""
    P, M0, M1, M2 = 500, 500, 501, 502
    t = Trace()
    for tid, name in ((M0, "main"), (M1, "busy"), (M2, "m2")):
        t.thread(P, tid, name)
        t.run(tid, 0)
    if go_rows:
        t.row(ms(0.5), M2, schema.GO_EXECUTE, obj=0xC000000300, obj2=0xC000000999, cpu=0)
        t.row(ms(1), M2, schema.GO_PARK, obj=0xC000000300, obj2=0xC000000999, cpu=0)
    t.futex_wait(M2, ms(1.01), 0x8000)
    t.fd_info(M0, ms(1.5), 3, "eventfd", 4711)
    t.block(M0, ms(2), "read", "read", obj=3)
    return t.build(trace_end=s(3)), P, M1, M2


def test_the_other_end_of_a_go_programs_own_fd_is_any_held_up_thread():
    """In a Go program the M that used an fd says nothing about who will
    write it (any M may run that goroutine): the process's held-up threads,
    a LongWait first, hold the other end, not the busiest of its threads.
    Without goroutines its own threads rank as before, the busiest first."""
    g, pid, m1, m2 = _go_eventfd_wait()
    j = to_json(diagnose(g, pid))
    assert (j["spinning"]["owner"]["kind"], j["spinning"]["owner"]["tid"]) == ("goroutine_fd", m2)
    assert "may end the wait of main/500 on fd 3" in j["root_causes"][0]["why"]
    g, pid, m1, m2 = _go_eventfd_wait(go_rows=False)
    j = to_json(diagnose(g, pid))
    assert (j["spinning"]["owner"]["kind"], j["spinning"]["owner"]["tid"]) == ("channel_peer", m1)


def _one_m_two_goroutines():
    """Process 500.  GA and GB (not locked) park on M1 at 1 and 1.5 ms; G2,
    locked to M2, parks at 1 ms and M2 sleeps in its futex; the main
    goroutine G0, locked to M0, parks at 2 ms.  M1 sleeps in 500 ms timed
    waits.  At 3 s Go's timer on M1 readies GB, which readies G2 (M2 wakes);
    G2 readies GA, which M1 runs next, and GA readies G0 (M0 wakes)."""
    P, M0, M1, M2 = 500, 500, 501, 502
    G0, GA, GB, G2 = 0xC000000100, 0xC000000200, 0xC000000300, 0xC000000400
    t, go = _go_process(P, ((M0, "main"), (M1, "m1"), (M2, "m2")))
    go(ms(0.1), M0, schema.GO_EXECUTE, G0)
    go(ms(0.2), M1, schema.GO_EXECUTE, GA)
    go(ms(0.3), M2, schema.GO_EXECUTE, G2)
    go(ms(1), M1, schema.GO_PARK, GA)
    go(ms(1), M2, schema.GO_PARK, G2)
    t.futex_wait(M2, ms(1.01), 0x8100)
    go(ms(1.2), M1, schema.GO_EXECUTE, GB)
    go(ms(1.5), M1, schema.GO_PARK, GB)
    go(ms(2), M0, schema.GO_PARK, G0)
    t.futex_wait(M0, ms(2.01), 0x7000)
    end = s(3)
    for k in range(6):               # M1: 500 ms timed waits, the last ended by Go's timer at 3 s
        t.futex_wait(M1, ms(2) + ms(500) * k, 0x8300)
        t.timer_wake(M1, min(ms(2) + ms(500) * (k + 1) - ms(1), end))
    go(end + us(10), M1, schema.GO_READY, GB)
    go(end + us(20), M1, schema.GO_EXECUTE, GB)
    go(end + us(30), M1, schema.GO_READY, G2)
    t.futex_wake(M1, end + us(40), 0x8100)
    t.wake(M1, M2, end + us(40))
    go(end + us(50), M1, schema.GO_PARK, GB)
    t.futex_wait(M1, end + us(60), 0x8300)
    t.run(M2, end + us(70))
    go(end + us(80), M2, schema.GO_EXECUTE, G2)
    go(end + us(90), M2, schema.GO_READY, GA)
    t.futex_wake(M2, end + us(100), 0x8300)
    t.wake(M2, M1, end + us(100))
    go(end + us(110), M2, schema.GO_PARK, G2)
    t.futex_wait(M2, end + us(120), 0x8100)
    t.run(M1, end + us(130))
    go(end + us(140), M1, schema.GO_EXECUTE, GA)
    go(end + us(150), M1, schema.GO_READY, G0)
    t.futex_wake(M1, end + us(160), 0x7000)
    t.wake(M1, M0, end + us(160))
    t.run(M0, end + us(200))
    go(end + us(210), M0, schema.GO_EXECUTE, G0)
    t.preempt(M0, end + ms(100))
    return t.build(trace_end=end + ms(200)), P, M1, M2, GA, GB


def test_an_m_found_again_for_another_goroutine_is_named_for_it():
    """M1 ran GA, whose wait M0's hang waited for, and before it GB, whose
    wait (Go's timer) ended the wait of G2 on M2 that GA waited for: M1 is
    named for GA, then, behind M2, again for GB, the deepest (the walk's
    identity on an M is the goroutine it ran there, not the thread)."""
    g, pid, m1, m2, ga, gb = _one_m_two_goroutines()
    j = to_json(diagnose(g, pid))
    got = [(c["tid"], c["depth"], c["evidence"].get("goroutine", {}).get("goroutine"), c["primary"])
           for c in j["root_causes"]]
    assert got == [(m1, 1, ga, False), (m2, 2, None, False), (m1, 3, gb, True)]
    assert "readied by Go's timers" in j["root_causes"][-1]["why"]


def test_a_thread_found_again_further_back_moves_down_with_what_lies_behind_it():
    """deepen: thread 3, named at depth 1 (from a baseline's path), is found
    again behind thread 2 at depth 2: it and thread 4 (found behind it) move
    down one level; never for a thread being diagnosed (a cycle)."""
    from argus.diagnose.algorithm import _Run, RootCause
    from argus.diagnose.hangs import find_hang
    g = C.yield_app(flags=False)
    run = _Run(g, find_hang(g, 600), AutoChooser(), 0)
    rcs = {u: RootCause(u, 0, "LongWait", 0, 1, "", d) for u, d in ((2, 1), (3, 1), (4, 2))}
    run.named.update(rcs)
    run.parent.update({2: 0, 3: 0, 4: 3})
    run.deepen(3, 2, 2)
    assert [rcs[u].depth for u in (2, 3, 4)] == [1, 2, 3]
    run.stack.append(2)
    run.deepen(2, 4, 4)                  # 2 is being diagnosed: a cycle, nothing moves
    assert [rcs[u].depth for u in (2, 3, 4)] == [1, 2, 3]


def test_an_event_loop_that_slept_until_a_timeout_before_answering_is_the_cause():
    """client (10) reads its socket from 1 ms; the server's loop (20) sits in
    epoll_wait until its 3 s timeout fires, then answers.  The loop's wait
    is where the path begins: a sleep on a timer, not idleness."""
    t = Trace()
    t.thread(10, 10, "client").thread(20, 20, "server")
    t.run(10, 0).run(20, 0)
    t.block(20, us(500), "poll", "epoll_wait", obj=4)
    t.block(10, ms(1), "read", "read", obj=3)
    t.timer_wake(20, s(3))
    t.syscall(20, s(3) + us(10), "write", obj=5)
    t.wake(20, 10, s(3) + us(20)).run(10, s(3) + us(25))
    t.block(20, s(3) + us(40), "poll", "epoll_wait", obj=4)
    t.block(10, s(3) + ms(1), "poll", "epoll_wait", obj=6)
    j = to_json(diagnose(t.build(trace_end=s(4)), 10))
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(20, "LongWait", True)]


def test_an_ongoing_wait_takes_no_baseline_on_another_object():
    """main (10) read a pipe quickly at 1 ms (its writer, 20, now computes
    over the hang), then waits on a timerfd from 5 ms to trace end: that
    earlier read on another object says nothing about the timer, so the
    busy writer is not named; main waits on the kernel."""
    t = Trace()
    t.thread(10, 10, "main").thread(20, 20, "writer")
    t.run(10, 0).run(20, 0)
    t.fd_info(10, ms(0.5), 3, "pipe", 4646)
    t.fd_info(20, ms(0.5), 4, "pipe", 4646)
    t.fd_info(10, ms(0.5), 5, "anon", 4747)
    t.block(10, ms(1), "read", "read", obj=3)
    t.syscall(20, ms(1.2), "write", obj=4, ret=1)
    t.wake(20, 10, ms(1.3)).run(10, ms(1.3))
    t.busy(20, ms(2), s(3), slice_ns=ms(10), gap_ns=us(20))
    t.block(10, ms(5), "read", "read", obj=5)
    j = to_json(diagnose(t.build(until=s(3)), 10))
    assert j["spinning"]["baseline"] is None
    assert [(c["tid"], c["depth"]) for c in j["root_causes"]] == [(10, 0)]


def _poller_and_its_waiter(spin=True, ended=True):
    """poller (10) polls from 1 ms to 3 s: it yields every ms (spin), or
    sleeps 1 ms between tries; then it signals condvar CV, which ends
    waiter 11's futex wait (from 1 ms: the whole poll) when `ended` (else
    the trace ends first).  The graph infers 11 holds lock G (it woke G's
    waiters once before: a GIL's hand-off): a weak futex_channel edge
    11 -> 10 at 2 s."""
    CV, G = 0xC0, 0x6E
    t = Trace()
    t.thread(10, 10, "poller").thread(10, 11, "waiter")
    t.run(10, 0).run(11, 0)
    t.futex_wake(11, us(500), G)
    t.futex_wait(11, ms(1), CV)
    now = ms(1)
    while now < s(3):
        if spin:
            t.yield_(10, now, back=now + us(2))
        else:
            t.block(10, now, "sleep", "nanosleep").timer_wake(10, now + ms(1) - us(5))
        now += ms(1)
    if ended:
        t.futex_wake(10, s(3), CV).wake(10, 11, s(3) + us(1)).run(11, s(3) + us(2))
        t.block(11, s(3) + us(20), "poll", "epoll_wait", obj=3)
    t.block(10, s(3) + us(30), "poll", "epoll_wait", obj=4)
    t.own(11, 10, s(2), "futex_channel", weak=True, obj=G)
    return t.build(trace_end=s(4) if ended else s(3) + ms(1))


def test_a_weak_holder_that_waited_for_the_poller_is_no_holder():
    """The inferred holder slept through the poll in a wait the poller
    itself ended: it waited for the poller and released nothing meanwhile,
    so the poller is the root cause, and the waiter is not named (neither
    as the channel's holder nor as a held-up thread of its process)."""
    j = to_json(diagnose(_poller_and_its_waiter(spin=False), 10))
    assert j["spinning"]["block_type"] == "RepeatedYield"
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(10, "RepeatedYield", True)]


def test_a_yield_spinner_follows_no_inferred_futex_channel():
    """A thread that yields more than it waits spins on memory: its rare
    futex waits are contention for another lock, so the waiter the graph
    infers holds that lock (its wait still going on: nothing contradicts
    it) is not followed."""
    j = to_json(diagnose(_poller_and_its_waiter(spin=True, ended=False), 10))
    assert j["spinning"]["block_type"] == "RepeatedYield"
    assert [(c["tid"], c["block_type"], c["primary"]) for c in j["root_causes"]] == [(10, "RepeatedYield", True)]


def test_an_inferred_holder_that_closes_a_loop_gives_way_to_the_one_further_on():
    """main (10) waits on a condvar (futex 0xC) its worker 11 signals once a
    byte arrives on a pipe (fd 3) that 10 made before forking child 20,
    which inherited it and sleeps over the hang before it writes.  10 and 11
    handed the condvar back and forth before.  The pipe's inferred holders
    are 11's own thread 10 (it exchanged wakeups with 11) and the child: 10
    is the waiter two steps up this very chain, a loop that names nobody,
    so the child is followed and named."""
    t = Trace()
    t.thread(10, 10, "main").thread(10, 11, "worker")
    t.run(10, 0).run(11, 0)
    t.fd_info(10, us(10), 3, "pipe", 4545)
    t.fork(10, 20, us(20), "main", child_pid=20)
    t.run(20, us(20))
    t.block(20, us(40), "sleep", "nanosleep")
    for k in range(3):       # quick hand-offs on the condvar before the hang
        at = us(100) + k * ms(1)
        t.futex_wait(10, at, 0xC)
        t.futex_wake(11, at + us(50), 0xC).wake(11, 10, at + us(50)).run(10, at + us(60))
    t.futex_wait(10, ms(5), 0xC)
    t.fd_info(11, ms(5) + us(10), 3, "pipe", 4545)
    t.block(11, ms(5) + us(20), "read", "read", obj=3)
    g = t.build(until=s(3))
    j = to_json(diagnose(g, 10))
    assert [(c["tid"], c["primary"]) for c in j["root_causes"]] == [(11, False), (20, True)]



def test_the_walk_stops_after_a_busy_cause_named_already():
    """main (10) waits from 1 ms on futex X until 30 wakes it at 3 s; 30
    waited on futex Y from 200 ms until 20 woke it at 2.9 s; 20 computed
    from 100 ms, when 40 woke it, to 2.9 s; 40 has slept since.  30 is
    named, and behind it the busy 20 (one level down).  main's own path
    passes 20 again, then 40: what lies behind a busy cause ended one of
    its short waits, not the hang, whether it is named now or already,
    so 40 is not named."""
    X, Y = 0xA0, 0xB0
    t = Trace()
    for tid, comm in ((10, "main"), (20, "cruncher"), (30, "relay"), (40, "starter")):
        t.thread(10, tid, comm)
        t.run(tid, 0)
    t.block(20, us(50), "read", "read", obj=3)
    t.futex_wait(10, ms(1), X)
    t.syscall(40, ms(100), "write", obj=4, ret=1)
    t.wake(40, 20, ms(100) + us(5))
    t.block(40, ms(101), "sleep", "nanosleep")
    t.busy(20, ms(100) + us(10), s(2.9), slice_ns=ms(10), gap_ns=us(20))
    t.futex_wait(30, ms(200), Y)
    t.futex_wake(20, s(2.9), Y).wake(20, 30, s(2.9) + us(1)).run(30, s(2.9) + us(2))
    t.block(20, s(2.9) + us(10), "poll", "epoll_wait", obj=5)
    t.futex_wake(30, s(3), X).wake(30, 10, s(3) + us(1)).run(10, s(3) + us(2))
    t.block(30, s(3) + us(10), "poll", "epoll_wait", obj=6)
    t.block(10, s(3) + us(20), "poll", "epoll_wait", obj=7)
    j = to_json(diagnose(t.build(trace_end=s(4)), 10))
    assert [(c["tid"], c["block_type"], c["depth"], c["primary"]) for c in j["root_causes"]] == \
        [(30, "LongWait", 1, False), (20, "LongRunning", 2, True)]


def test_the_primary_among_equal_depths_is_on_the_hung_waits_own_chain():
    """A cause is direct when every link from the hung thread down to it is
    the path of wakeups that ended the waits or a holder the kernel named;
    a baseline's path or an inferred (weak) holder breaks the chain.  At the
    greatest depth a direct cause is primary before one found later off the
    chain; with none direct (or all), the last found."""
    from argus.diagnose.algorithm import _Run, RootCause, _mark_primary
    from argus.diagnose.hangs import find_hang
    from argus.diagnose.ownership import Owner
    g = C.yield_app(flags=False)
    run = _Run(g, find_hang(g, 600), AutoChooser(), 0)
    strong, weak = (Owner(2, 0, -1, "futex_owner", w, 1, 0, 0, 0) for w in (False, True))
    no_owner = {"owner": None}
    assert run.direct(600, "slice", no_owner, 0)
    assert not run.direct(600, "baseline", no_owner, 0)
    assert run.direct(600, "owner", {"owner": strong}, 0)
    assert not run.direct(600, "owner", {"owner": weak}, 0)
    run.named[2] = RootCause(2, 0, "LongWait", 0, 1, "", 1, direct=False)
    run.named[3] = RootCause(3, 0, "LongWait", 0, 1, "", 1, direct=True)
    assert not run.direct(2, "slice", no_owner, 1)      # below a baseline's find
    assert run.direct(3, "slice", no_owner, 1)
    assert not run.direct(3, "baseline", no_owner, 1)

    def roots(*spec):
        return [RootCause(u, 0, "LongWait", 0, 1, "", d, direct=x) for u, d, x in spec]

    def primary(rs):
        _mark_primary(rs)
        return [r.utid for r in rs if r.primary]

    assert primary(roots((4, 1, True), (5, 2, True), (6, 2, False))) == [5]
    assert primary(roots((4, 1, True), (5, 2, False), (6, 2, False))) == [6]
    assert primary(roots((4, 1, True), (5, 2, True), (6, 2, True))) == [6]
    assert primary(roots((4, 2, False), (5, 1, True))) == [4]     # depth first
    assert primary([]) == []


def test_notes_name_records_lost_and_switches_unreported_apart():
    t, info = C.client_daemon()
    t.lost(s(1), 4, kind=schema.LOST_SWITCHES_UNREPORTED)
    j = to_json(diagnose(t.build(trace_end=info["trace_end"]), APP))
    assert [n for n in j["notes"] if "lost" in n] == []
    assert [n for n in j["notes"] if "never reported" in n] == [
        "4 context switches were never reported by the kernel (no tracepoint ran), so the records of those "
        "stretches are missing; edges may be missing"]
    t.lost(s(2), 6)
    j = to_json(diagnose(t.build(trace_end=info["trace_end"]), APP))
    assert [n for n in j["notes"] if "lost" in n] == ["6 records were lost while tracing; edges may be missing"]


def _read_after_a_kernel_ended_wait(send=True):
    """main (10) waits on futex X from 1 ms until 30 wakes it at 3 s.  30
    waited on futex Y (its own park word) from 200 ms; the kernel ended
    that wait at 2.95 s (a timer: no task's wakeup), and 30 then read the
    pipe 20 (process 20) had written at 2.9 s after sleeping since 100
    ms.  Earlier, at 150 ms, 30 waited on Y briefly and 40 woke it (a
    baseline); 40 has slept on futex Z since 160 ms.  With send=False 30
    reads nothing (corpus case 051's shape)."""
    X, Y, Z = 0xA0, 0xB0, 0xC0
    t = Trace()
    for tid, comm in ((10, "main"), (20, "writer"), (30, "relay"), (40, "spare")):
        t.thread(20 if tid == 20 else 10, tid, comm)
        t.run(tid, 0)
    t.fd_info(20, us(10), 4, "pipe", 77)
    t.fd_info(30, us(10), 3, "pipe", 77)
    t.futex_wait(10, ms(1), X)
    t.block(20, ms(100), "sleep", "nanosleep")
    t.futex_wait(30, ms(150), Y)
    t.futex_wake(40, ms(151), Y).wake(40, 30, ms(151) + us(1)).run(30, ms(151) + us(2))
    t.futex_wait(40, ms(160), Z)
    t.futex_wait(30, ms(200), Y)
    t.timer_wake(20, s(2.9))
    if send:
        t.syscall(20, s(2.9) + us(5), "write", obj=4, obj2=77, ret=1)
    t.block(20, s(2.9) + us(10), "sleep", "nanosleep")
    t.timer_wake(30, s(2.95))
    if send:
        t.syscall(30, s(2.95) + us(5), "read", obj=3, obj2=77, ret=1)
    t.futex_wake(30, s(3), X).wake(30, 10, s(3) + us(1)).run(10, s(3) + us(2))
    t.block(30, s(3) + us(10), "poll", "epoll_wait", obj=6)
    t.block(10, s(3) + us(20), "poll", "epoll_wait", obj=7)
    return to_json(diagnose(t.build(trace_end=s(4)), 10))


def test_a_message_read_after_a_wait_the_kernel_ended_comes_before_a_baseline():
    """30's wait has no waker in the trace, but what it read right after
    was sent by 20 during it: 20 is behind 30 (one level down) and primary,
    and 40, the thread that woke 30 on an earlier occasion (the baseline)
    and has slept since, is not named.  Without the read, the baseline's
    path is all there is."""
    j = _read_after_a_kernel_ended_wait()
    assert [(c["tid"], c["depth"], c["primary"]) for c in j["root_causes"]] == [(30, 1, False), (20, 2, True)]
    j = _read_after_a_kernel_ended_wait(send=False)
    assert [(c["tid"], c["depth"], c["primary"]) for c in j["root_causes"]] == [(30, 1, False), (40, 2, True)]
