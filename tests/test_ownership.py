"""End to end: who holds what a thread waits for, and what a loop waits on,
recorded by the real tracer from real programs (tests/programs/lock_owners.c,
Python children) and turned into graph columns and ownership edges.

  - a pthread mutex held by a sleeping thread: FUTEX_STATE names the holder
    through glibc's __owner field -> weak futex_owner edge holder -> waiter;
  - the same with a priority-inheritance mutex: the word names the holder
    (kernel ABI) -> strong edge;
  - a thread joining another (pthread_join): FUTEX_STATE flags the wait on
    the joined thread's clear_child_tid word -> strong thread_exit edge;
  - a condition waited on with a 5 ms timeout while the thread that used to
    signal it computes (GIL-like) -> weak futex_channel edges to the waits;
  - a process polling an fcntl / flock lock held by another (try, fail,
    usleep) -> FILE_LOCK records naming the holder, strong file_lock edges
    into the polling vertices;
  - poll / select / epoll clients: WAIT_SITE fds and timeouts, one record per
    distinct site, and the send before the wait.
"""
import json
import os
import subprocess

import numpy as np
import pytest

from argus.tracer import reader, schema, syscalls
from argus.graphbuild import graph as G
from argus.graphbuild.builder import build_graph_from_trace

from support.children import run_python_json
from support.programs import program


def run_lock_owners(mode):
    proc = subprocess.run([program("argus-lock-owners"), mode], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, (mode, proc.returncode, proc.stderr)
    return json.loads(proc.stdout.splitlines()[0])


run_child = run_python_json


def graph_of(tracing):
    tracing.wait_drained()
    tr = reader.decode_file(tracing.buffer, strict=False)
    return tr, build_graph_from_trace(tr)


def owner_edges(g, waiter_pid, kind):
    e = g.edges
    sel = np.flatnonzero((e.type == G.EDGE_OWNERSHIP) & (e.owner_kind == kind))
    return [k for k in sel.tolist() if g.seg.pid[e.dst[k]] == waiter_pid]


@pytest.mark.parametrize("mode, weak", [("mutex", True), ("robust-mutex", True), ("pi-mutex", False)])
def test_mutex_holder_is_named_by_the_lock_word(tracing, mode, weak):
    info = run_lock_owners(mode)
    tr, g = graph_of(tracing)
    r = tr.rows
    # (not the join of the holder at the end, when it has not exited yet)
    states = r[(r["type"] == schema.FUTEX_STATE) & (r["tid"] == info["waiter_tid"]) & (r["pid"] == info["pid"])
               & (r["state"] != schema.FUTEX_THREAD_EXIT)]
    assert len(states) >= 1, "no FUTEX_STATE at the waiter's blocking wait"
    st = states[-1]
    if mode == "pi-mutex":
        assert st["state"] & schema.FUTEX_PI and int(st["val"]) & schema.FUTEX_TID_MASK == info["holder_tid"]
    else:
        assert int(st["peer_tid"]) == info["holder_tid"] and int(st["obj"]) == info["addr"]
        word = int(st["val"])
        assert word in (1, 2) if mode == "mutex" else word & schema.FUTEX_TID_MASK == info["holder_tid"]
    edges = owner_edges(g, info["pid"], G.OWNER_FUTEX_OWNER)
    assert edges, "no futex_owner edge into the waiter"
    k = edges[-1]
    src, dst = int(g.edges.src[k]), int(g.edges.dst[k])
    assert (int(g.seg.tid[src]), int(g.seg.tid[dst])) == (info["holder_tid"], info["waiter_tid"])
    assert bool(g.edges.weak[k]) == weak
    assert g.seg.wait_reason[dst] == schema.WAIT_FUTEX and g.seg.end_kind[dst] == G.END_BLOCKED
    assert g.edges.ts[k] == g.seg.wait_start[dst]
    # the holder's vertex is the one that sleeps holding the lock
    assert g.seg.start[src] <= g.edges.ts[k] and g.seg.wait_reason[src] == schema.WAIT_SLEEP


def test_join_points_to_the_joined_thread(tracing):
    info = run_lock_owners("join")
    tr, g = graph_of(tracing)
    r = tr.rows
    states = r[(r["type"] == schema.FUTEX_STATE) & (r["tid"] == info["waiter_tid"]) & (r["pid"] == info["pid"])]
    assert len(states) >= 1, "no FUTEX_STATE at the join's wait"
    st = states[-1]
    assert int(st["state"]) == schema.FUTEX_THREAD_EXIT
    assert int(st["peer_tid"]) == info["holder_tid"] == int(st["val"])    # glibc waits on the tid word
    edges = owner_edges(g, info["pid"], G.OWNER_THREAD_EXIT)
    assert len(edges) == 1, "no thread_exit edge into the joining thread"
    k = edges[0]
    src, dst = int(g.edges.src[k]), int(g.edges.dst[k])
    assert (int(g.seg.tid[src]), int(g.seg.tid[dst])) == (info["holder_tid"], info["waiter_tid"])
    assert not g.edges.weak[k] and g.edges.obj[k] == int(st["obj"])
    assert g.seg.wait_reason[dst] == schema.WAIT_FUTEX and g.edges.ts[k] == g.seg.wait_start[dst]
    # no other kind of ownership claim about the join
    assert not owner_edges(g, info["pid"], G.OWNER_FUTEX_OWNER)


def test_gil_like_condition_points_to_its_previous_waker(tracing):
    info = run_lock_owners("condvar")
    tr, g = graph_of(tracing)
    edges = owner_edges(g, info["pid"], G.OWNER_FUTEX_CHANNEL)
    pairs = {(int(g.seg.tid[g.edges.src[k]]), int(g.seg.tid[g.edges.dst[k]])) for k in edges}
    assert pairs == {(info["holder_tid"], info["waiter_tid"])}
    assert all(g.edges.weak[k] for k in edges)
    # the timed waits while the holder computes: ~800 ms / 5 ms, many of them
    timed_out = [k for k in edges if g.seg.wait_timedout[g.edges.dst[k]]]
    assert len(timed_out) >= 20


@pytest.mark.parametrize("mode, kind", [("file-lock", schema.LOCK_POSIX), ("flock", schema.LOCK_FLOCK)])
def test_polling_a_file_lock_points_to_the_holder_process(tracing, mode, kind):
    info = run_lock_owners(mode)
    tr, g = graph_of(tracing)
    r = tr.rows
    locks = r[(r["type"] == schema.FILE_LOCK) & (r["pid"] == info["waiter_pid"])]
    assert len(locks) >= 5
    tries = locks[locks["reason"] == schema.LOCK_WRITE]
    assert set(tries["state"].tolist()) == {kind}
    assert int(tries[0]["peer_pid"]) == info["holder_pid"]          # the kernel's lock list named it
    assert tries[0]["irq"] == schema.LOCK_WRITE
    held = r[(r["type"] == schema.FILE_LOCK) & (r["pid"] == info["holder_pid"])]
    assert set(held["obj"].tolist()) == set(tries["obj"].tolist()) != {0}   # one inode
    edges = owner_edges(g, info["waiter_pid"], G.OWNER_FILE_LOCK)
    assert len(edges) >= 5
    assert {int(g.seg.pid[g.edges.src[k]]) for k in edges} == {info["holder_pid"]}
    assert not any(g.edges.weak[k] for k in edges)
    # each failed try's vertex then sleeps (usleep) before trying again
    sleeps = [k for k in edges if g.seg.wait_reason[g.edges.dst[k]] == schema.WAIT_SLEEP]
    assert len(sleeps) >= len(edges) - 1


WAIT_SITES = """
    import json, os, select, socket, threading, time
    a, b = socket.socketpair()
    c, d = socket.socketpair()
    # the echo server is a process, not a thread: a thread would take the
    # GIL back from each poll, so the poll's last action could be that
    # futex wake instead of the send
    if os.fork() == 0:
        a.close()
        while True:
            req = b.recv(16)
            if not req:                      # the parent is gone
                os._exit(0)
            time.sleep(0.02)
            b.send(req)
    b.close()
    p = select.poll()
    p.register(a, select.POLLIN)
    p.register(c, select.POLLIN | select.POLLPRI)
    for _ in range(3):                       # request, then wait for the reply: the same site
        a.send(b"ping")
        assert p.poll(1500)
        a.recv(16)
    a.send(b"ping")
    r, _, _ = select.select([c, a], [], [], 1.5)
    a.recv(16)
    ep = select.epoll()
    ep.register(a, select.EPOLLIN)
    a.send(b"ping")
    assert ep.poll(1.5)
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id(), "a": a.fileno(),
                      "c": c.fileno(), "ep": ep.fileno()}))
"""


def test_poll_select_epoll_wait_sites_and_the_send_before(tracing):
    info = run_child(WAIT_SITES)
    tr, g = graph_of(tracing)
    r = tr.rows
    mine = r[(r["type"] == schema.WAIT_SITE) & (r["tid"] == info["tid"])]
    a, c = info["a"], info["c"]
    by_nr = {}
    for row in mine:
        fds = tr.frames[int(row["obj"]):int(row["obj"]) + int(row["peer_tid"])]
        by_nr.setdefault(syscalls.name(row["nr"]), []).append(
            (int(row["aux"]), int(row["peer_pid"]),
             [(int(np.int32(np.uint32(f & 0xFFFFFFFF))), int(f >> 32)) for f in fds.tolist()]))
    polls = by_nr.get("poll") or by_nr.get("ppoll")
    assert polls and polls[0] == (1500, 2, [(a, 1), (c, 1 | 2)])
    # three blocking polls at one site, one record (the next blocking wait 1 s later refreshes)
    assert len(polls) == 1
    sel = by_nr.get("select") or by_nr.get("pselect6")
    assert sel and sel[0][0] == 1500 and sel[0][2] == [(min(a, c), 1), (max(a, c), 1)]
    ep = by_nr.get("epoll_wait") or by_nr.get("epoll_pwait")
    assert ep and ep[0][2] == [(info["ep"], 0)] and ep[0][0] == 1500
    # graph: the three poll vertices share one site, each after a send on fd a
    u = g.utid_of_tid(info["tid"])
    vs = [int(v) for v in g.thread_segments(u) if g.seg.wait_site[v] and g.seg.end_kind[v] == G.END_BLOCKED]
    poll_vs = [v for v in vs if g.syscall_name(g.seg.wait_nr[v]) in ("poll", "ppoll")]
    assert len(poll_vs) == 3 and len({int(g.seg.wait_site[v]) for v in poll_vs}) == 1
    assert g.wait_fds(poll_vs[0]) == [(a, 1), (c, 3)]
    for v in poll_vs:
        assert g.seg.wait_timeout_ms[v] == 1500
        assert (g.seg.act_kind[v], g.seg.act_obj[v]) == (G.ACT_SEND, a)
        assert g.seg.act_ts[v] <= g.seg.wait_start[v]


def test_argus_events_shows_the_new_records(tracing):
    info = run_lock_owners("file-lock")
    run_lock_owners("pi-mutex")
    run_child(WAIT_SITES)
    tracing.wait_drained()
    # frozen before the two reads: on a busy machine (other tracers' workloads)
    # a live 1 GiB ring can wrap between them and lose these records
    tracing.stop()
    lines = tracing.run("events", "--buffer", tracing.buffer, "--json", "--type", "file_lock",
                        "--type", "futex_state", "--type", "wait_site").stdout.splitlines()
    recs = [json.loads(line) for line in lines]
    by_type = {}
    for rec in recs:
        by_type.setdefault(rec["type"], []).append(rec)
    assert set(by_type) == {"file_lock", "futex_state", "wait_site"}
    tries = [x for x in by_type["file_lock"] if x["pid"] == info["waiter_pid"] and x["lock_type"] == "write"]
    assert tries and tries[0]["kind"] == "posix" and tries[0]["holder_pid"] == info["holder_pid"]
    assert any(x["pi"] for x in by_type["futex_state"])
    assert any(x["fds"] and x["timeout_ms"] == 1500 for x in by_type["wait_site"])
    text = tracing.run("events", "--buffer", tracing.buffer, "--pid", str(info["waiter_pid"]),
                       "--type", "file_lock").stdout
    assert "posix write fd=" in text and f"holder={info['holder_pid']} (write)" in text
