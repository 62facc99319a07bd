"""Bystanders on crafted traces: waits for children, signals, connections and
a pipeline's input are never hangs or root causes by themselves."""
from support.crafted import Trace, ms, s
from argus.diagnose.bystanders import bystander
from argus.diagnose.candidates import Traits, judge
from argus.diagnose.hangs import thread_hangs


def _one_wait(reason, syscall, obj=0, comm="launcher", fd_kind=None):
    t = Trace()
    t.thread(10, 10, comm)
    t.run(10, 0)
    if fd_kind:
        t.fd_info(10, ms(1), obj, fd_kind, 99)
    t.block(10, ms(2), reason, syscall, obj=obj)
    g = t.build(until=s(5))
    return g, g.segment_at(g.utid_of_tid(10), s(1))


def test_waits_for_others_work_are_bystanders():
    assert bystander(*_one_wait("child", "wait4")) == "it waits for its children"
    assert bystander(*_one_wait("accept", "accept4", obj=3)) == "an idle server waiting for a connection"
    assert "signal" in bystander(*_one_wait("syscall", "rt_sigsuspend"))
    assert bystander(*_one_wait("read", "read", obj=0, fd_kind="pipe")) == "a pipeline stage waiting for its input"


def test_a_synchronous_read_is_no_bystander():
    assert bystander(*_one_wait("read", "read", obj=0, fd_kind="tty")) is None        # a terminal: other rule
    assert bystander(*_one_wait("read", "read", obj=5, fd_kind="pipe")) is None       # not its input
    assert bystander(*_one_wait("futex", "futex", obj=0x1000)) is None


def test_argus_hangs_drops_bystanders():
    g, v = _one_wait("child", "wait4")
    (h,) = thread_hangs(g, g.utid_of_tid(10))
    assert judge(g, h, Traits(g, socket_paths={})) == (None, "it waits for its children")
