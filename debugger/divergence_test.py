"""divergence.find on hand-made instruction streams: data in, exact ranking out."""
import pytest

from argus.debugger import divergence
from argus.debugger.base import DebuggerError

FLAG, STACK = 0x5000, 0x7ffc0010


def ins(pc, asm, mem=None, fn="wait"):
    r = {"pc": pc, "asm": asm, "function": fn}
    if mem:
        r["mem"] = mem
    return r


def loop(flag_value, n, exit_=False):
    body = []
    for _ in range(n):
        body += [ins(0x10, "mov eax, dword ptr [rsp + 8]", [{"addr": STACK, "size": 4, "access": "r",
                                                              "base": "rsp", "value": 7}]),
                 ins(0x14, "mov ecx, dword ptr [rip + 0x100]", [{"addr": FLAG, "size": 4, "access": "r",
                                                                 "base": "rip", "value": flag_value}]),
                 ins(0x1a, "cmp ecx, eax"),
                 ins(0x1c, "jl 0x10")]
    if exit_:
        body.append(ins(0x1e, "ret"))
    return body


def doc(stream):
    return {"schema": "argus.lldb-trace/1", "pid": 42, "instructions": stream}


def test_divergence_ranks_the_changed_global_first():
    spinning = doc(loop(0, 5))
    normal = doc(loop(0, 2) + loop(1, 1, exit_=True))
    divs = divergence.find(normal, spinning, resolve=lambda a: "app:g_ready" if a == FLAG else None)
    assert [d.pc for d in divs] == [0x1c]
    d = divs[0]
    assert d.normal_next == [0x10, 0x1e] and d.spinning_next == [0x10]
    assert d.first_normal_index == 11
    first, second = d.operands
    assert (first.addr, first.symbol, first.distance, first.differs) == (FLAG, "app:g_ready", 2, True)
    assert first.spinning_values == [0] and first.normal_values == [1]
    assert first.watch == "bp_watch 42 app g_ready"
    assert (second.addr, second.is_stack, second.symbol) == (STACK, True, None)
    assert second.watch == "bp_watch 42 --address 0x7ffc0010 --size 4"


def test_same_branches_no_divergence():
    assert divergence.find(doc(loop(0, 3)), doc(loop(0, 4))) == []


def test_bad_input_is_one_error():
    with pytest.raises(DebuggerError, match="normal trace is not"):
        divergence.find({"schema": "x"}, doc(loop(0, 2)))
    with pytest.raises(DebuggerError, match="fewer than 2"):
        divergence.find(doc(loop(0, 2)), doc([]))
