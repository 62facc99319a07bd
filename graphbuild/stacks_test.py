"""User stacks of vertices: the join of blocking switch-outs with USER_STACK
rows, and symbolization through MAPPING rows and a real ELF file on disk."""
import os

import numpy as np
import pytest

from argus.tracer import schema
from support.crafted import Trace, ms
from support.libc import LIBC, libc_symbol_offset

@pytest.mark.skipif(not os.path.exists(LIBC), reason="needs the x86_64 glibc")
def test_blocking_vertices_get_their_symbolized_stack():
    base = 0x7F0000000000
    off = libc_symbol_offset("getpid")
    path = LIBC.encode()
    t = Trace()
    t.thread(10, 10, "app")
    t.run(10, 0)
    # MAPPING: libc at base (peer_tid = offset of the path in strings, peer_pid = its length)
    t.row(ms(0.5), 10, schema.MAPPING, obj=base, obj2=base + 0x200000, val=0, aux=5, peer_tid=0,
          peer_pid=len(path))
    t.row(ms(1), 10, schema.SYSCALL_ENTER, nr=0, obj=3)
    t.row(ms(1), 10, schema.SWITCH_OUT, state=schema.STATE_BLOCKED, reason=schema.WAIT_READ, nr=0, obj=3,
          obj2=0xABC)
    t.row(ms(1), 10, schema.USER_STACK, obj=0, aux=3, obj2=0xABC)        # frames[0:3]
    t.wake(0, 10, ms(2), "hardirq", "device").run(10, ms(2))
    t.row(ms(3), 10, schema.SWITCH_OUT, state=schema.STATE_BLOCKED, reason=schema.WAIT_READ, nr=0, obj=3)
    g = t.build(trace_end=ms(5))
    g.frames = np.array([base + off, 0x1234, base + 0x1FFFF0], np.uint64)
    g.strings = path
    v0, v1 = g.thread_segments(g.utid_of_tid(10))
    names = g.wait_stack(v0)
    assert len(names) == 3 and "getpid" in names[0]
    assert names[1] == "0x1234"                          # outside every mapping
    assert not names[2].startswith("0x")                 # inside the mapping: a name or libc.so.6+0x...
    assert g.wait_stack(v1) == []                        # no stack id on that switch-out
    st = g.stacks
    assert list(st.seg) == [v0] * 3 and list(st.depth) == [0, 1, 2]


def test_graph_without_stacks_has_an_empty_table():
    t = Trace()
    t.thread(10, 10, "app")
    t.run(10, 0).block(10, ms(1), "read", "read", obj=3)
    g = t.build()
    assert len(g.stacks) == 0 and g.wait_stack(0) == []


def test_a_fifo_at_a_mapped_path_does_not_block(tmp_path):
    """The owner of a mapped file may put a FIFO at its path before root runs
    `argus debug`: the symbolizer skips it (frames stay file+offset)."""
    import threading
    from argus.graphbuild import stacks
    fifo = tmp_path / "lib.so"
    os.mkfifo(fifo)
    out = []
    t = threading.Thread(target=lambda: out.append((stacks.load_segments(str(fifo)),
                                                    stacks._function_names(str(fifo), [0x10]))), daemon=True)
    t.start()
    t.join(30)
    assert out == [([], [None])]
