"""value_flags.find on hand-made streams shaped like gcc -O1's rotated poll
loop (tests/programs/split_poll.c): the flag tested by `jne` at the entry of
a normal call and by `je` at the bottom of the spinning loop."""
import pytest

from argus.debugger import divergence, value_flags
from argus.debugger.base import DebuggerError

READY, POLLS, STACK = 0x4058, 0x4050, 0x7ffc0010


def ins(pc, asm, mem=None):
    r = {"pc": pc, "asm": asm, "function": "split_wait"}
    if mem:
        r["mem"] = mem
    return r


def rd(addr, value, size=4, base="rip", access="r"):
    return [{"addr": addr, "size": size, "access": access, "base": base, "value": value}]


def spinning(n, polls0=10):
    out = []
    for i in range(n):
        out += [ins(0x11e0, "mov eax, dword ptr [rip + 0x2e72]", rd(READY, 0)),
                ins(0x11e6, "test eax, eax"),
                ins(0x11e8, "je 0x11bf"),
                ins(0x11bf, "mov rax, qword ptr [rip + 0x2e8a]", rd(POLLS, polls0 + i, 8)),
                ins(0x11c6, "add rax, 1"),
                ins(0x11ca, "mov qword ptr [rip + 0x2e7f], rax",
                    [{"addr": POLLS, "size": 8, "access": "w", "base": "rip", "value": polls0 + i}]),
                ins(0x11d1, "call 0x1050"),
                ins(0x11d6, "mov edi, 0x3e8"),
                ins(0x11db, "call 0x1080")]
    return out


def normal(polls=200):
    return [ins(0x119f, "mov rax, qword ptr [rip + 0x2eaa]", rd(POLLS, polls, 8)),
            ins(0x11a6, "add rax, 1"),
            ins(0x11aa, "mov qword ptr [rip + 0x2e9f], rax"),
            ins(0x11b1, "mov eax, dword ptr [rip + 0x2ea1]", rd(READY, 1)),
            ins(0x11b7, "test eax, eax"),
            ins(0x11b9, "jne 0x11ef"),
            ins(0x11ef, "ret")]


def doc(stream):
    return {"schema": "argus.lldb-trace/1", "pid": 42, "instructions": stream}


def names(a):
    return {READY: "app:split_ready", POLLS: "app:split_polls"}.get(a)


def test_split_sites_flag_ranked_first():
    n, s = doc(normal()), doc(spinning(6))
    assert divergence.find(n, s) == []          # no branch both streams ran
    flags = value_flags.find(n, s, resolve=names)
    assert [f.addr for f in flags] == [READY, POLLS]
    f = flags[0]
    assert (f.symbol, f.size, f.spinning_values, f.normal_values) == ("app:split_ready", 4, [0], [1])
    assert f.consistent and f.split_sites and f.every_iteration
    assert (f.spinning_reads, f.normal_reads, f.iterations) == (6, 1, 6)
    assert f.tested_by == {"normal": {0x11b9: "jne 0x11ef"}, "spinning": {0x11e8: "je 0x11bf"}}
    assert f.watch == "bp_watch 42 app split_ready"
    polls = flags[1]             # differs, but a new value every round: not consistent
    assert polls.spinning_values == [10, 11, 12, 13, 14, 15] and not polls.consistent
    assert "spinning" not in polls.tested_by      # stored back, then a call: not what je tests
    d = f.to_dict()
    assert d["tested_by"]["spinning"] == [{"pc": 0x11e8, "asm": "je 0x11bf"}] and d["split_sites"]


def test_same_values_are_no_flag():
    s = spinning(3)
    assert value_flags.find(doc(s), doc(s)) == []


def test_a_stack_slot_ranks_after_a_global():
    n = normal() + [ins(0x1200, "mov eax, dword ptr [rsp + 8]", rd(STACK, 5, base="rsp")), ins(0x1204, "jne 0x1")]
    s = spinning(3) + [ins(0x1200, "mov eax, dword ptr [rsp + 8]", rd(STACK, 4, base="rsp")), ins(0x1204, "jne 0x1")]
    flags = value_flags.find(doc(n), doc(s), resolve=names)
    assert [f.addr for f in flags] == [READY, STACK, POLLS]
    assert flags[1].is_stack and flags[1].symbol is None
    assert flags[1].watch == "bp_watch 42 --address 0x7ffc0010 --size 4"


def test_write_only_operands_are_not_reads():
    n = normal() + [ins(0x1300, "mov dword ptr [rip + 4], eax",
                        [{"addr": 0x6000, "size": 4, "access": "w", "base": "rip", "value": 9}])]
    s = spinning(2) + [ins(0x1300, "mov dword ptr [rip + 4], eax",
                           [{"addr": 0x6000, "size": 4, "access": "w", "base": "rip", "value": 3}])]
    assert 0x6000 not in [f.addr for f in value_flags.find(doc(n), doc(s))]


def test_bad_input_is_one_error():
    with pytest.raises(DebuggerError, match="spinning trace is not"):
        value_flags.find(doc(normal()), {"schema": "x"})
