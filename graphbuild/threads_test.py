"""Thread / process table: names, pids, lifetimes, tid reuse."""
from argus.tracer import schema
from support.crafted import Trace, ms


def test_names_from_snapshot_fork_exec_and_rename():
    t = Trace()
    t.thread(50, 50, "shell")
    t.thread(50, 51, "shell-worker")
    t.run(50, ms(0))
    t.fork(50, 60, ms(1), "shell", child_pid=60)       # a new process
    t.run(60, ms(2))
    t.row(ms(3), 60, schema.EXEC, comm="editor")        # exec renames the process
    t.fork(60, 61, ms(4), "editor")                     # a thread of it
    t.rename(61, ms(5), "editor-io")
    g = t.build()
    th = {int(g.threads.tid[u]): (int(g.threads.pid[u]), g.comm(u)) for u in range(len(g.threads))}
    assert th == {50: (50, "shell"), 51: (50, "shell-worker"), 60: (60, "editor"), 61: (60, "editor-io")}
    assert g.process_name(50) == "shell" and g.process_name(60) == "editor"
    assert g.processes[60]["ppid"] == 50 and g.processes[50]["ppid"] == 1
    u61 = g.utid_of_tid(61)
    assert g.threads.created[u61] and g.threads.start_ts[u61] == ms(4)
    assert g.threads.parent_utid[u61] == g.utid_of_tid(60)
    assert not g.threads.created[g.utid_of_tid(51)]


def test_process_name_without_main_thread_is_first_seen():
    t = Trace()
    t.thread(70, 72, "pool-2")
    t.thread(70, 71, "pool-1")
    t.thread(80, 81, "nameless", snapshot=False)
    t.run(72, ms(0))
    t.run(71, ms(1))
    t.run(81, ms(1))
    g = t.build()
    assert g.process_name(70) == "pool-2"            # first seen
    assert [int(g.threads.tid[u]) for u in g.utids_of_pid(70)] == [72, 71]
    assert g.process_name(80) == "" and g.comm(g.utid_of_tid(81)) == ""


def test_tid_reuse_after_exit_gets_a_new_utid():
    t = Trace()
    t.thread(10, 10, "main")
    t.run(10, ms(0))
    t.fork(10, 11, ms(1), "first")
    t.run(11, ms(1))
    t.exit(11, ms(2))
    t.fork(10, 11, ms(3), "second")
    t.run(11, ms(3))
    g = t.build(trace_end=ms(5))
    us_ = g.utids_of_tid(11)
    assert len(us_) == 2
    assert [g.comm(u) for u in us_] == ["first", "second"]
    assert g.threads.end_ts[us_[0]] == ms(2) and g.threads.end_ts[us_[1]] == -1
    assert g.utid_of_tid(11, at=ms(1.5)) == us_[0] and g.utid_of_tid(11, at=ms(4)) == us_[1]
    assert g.utid_of_tid(11) == us_[1]
    segs = [[(int(g.seg.start[v]), int(g.seg.end[v])) for v in g.thread_segments(u)] for u in us_]
    assert segs == [[(ms(1), ms(2))], [(ms(3), ms(5))]]


def test_tid_seen_again_after_death_without_fork():
    t = Trace()
    t.thread(10, 10, "main")
    t.thread(10, 11, "w")
    t.run(10, ms(0)).run(11, ms(0))
    t.exit(11, ms(1))
    t.run(11, ms(3))                        # fork lost: a new instance anyway
    g = t.build(trace_end=ms(4))
    assert g.stats["tid_reuse"] == 1
    a, b = g.utids_of_tid(11)
    assert [(int(g.seg.start[v]), int(g.seg.end[v]), g.vertex(v)["end_kind"]) for v in g.thread_segments(a)] == \
        [(0, ms(1), "exit")]
    assert [(int(g.seg.start[v]), int(g.seg.end[v]), g.vertex(v)["start_label"]) for v in g.thread_segments(b)] == \
        [(ms(3), ms(4), "thread_start")]
