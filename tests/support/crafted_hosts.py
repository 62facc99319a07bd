"""Two crafted hosts merged into one graph (graphbuild/multihost.py): a
client on host "web" waits 3 s on a server busy on host "api", joined by
one TCP connection whose sends and receives the merge matches.  Shared by
the diagnosis, export and REPL tests of several hosts."""
import types

import numpy as np

from argus.graphbuild import build_graph
from argus.graphbuild import multihost as MH
from support.crafted import Trace, ms

C, S = ("10.0.12.1", 40000), ("10.0.12.2", 8080)


def ep(addr):
    a, b, c, d = (int(x) for x in addr[0].split("."))
    return (((a << 24) | (b << 16) | (c << 8) | d) << 16) | addr[1]


def _trace(t, host):
    rows = t.rows()
    return types.SimpleNamespace(rows=rows, nrows=len(rows), frames=np.zeros(0, np.uint64), strings=b"",
                                 first_ts=int(rows["ts_ns"][0]), last_ts=int(rows["ts_ns"][-1]), created_ns=0,
                                 created_realtime_ns=0, records_overwritten=0, records_lost=0, switches_unreported=0,
                                 torn_chunks=0, bad_records=0, warning="", hostname=host, boot_id="")


def two_hosts(with_server=True, paths=("a.argus", "b.argus")):
    """The merged graph; without the server's buffer, the client's host alone.
    paths: the buffers' names (where files stored next to a buffer are looked for)."""
    a = Trace()
    a.thread(100, 100, "client")
    a.run(100, ms(0))
    a.fd_info(100, ms(0.4), 5, "socket", ep(C), peer=ep(S), family=2)
    a.syscall(100, ms(0.5), "write", obj=5, ret=10)
    a.block(100, ms(1), "read", "read", obj=5)
    a.wake(0, 100, ms(3001), context="softirq", irq="net")
    a.run(100, ms(3001), ret=100)
    a.syscall(100, ms(3002), "write", obj=1, ret=1)
    b = Trace()
    b.thread(100, 100, "server")
    b.run(100, ms(0))
    b.fd_info(100, ms(0.1), 7, "socket", ep(S), peer=ep(C), family=2)
    b.block(100, ms(0.2), "read", "read", obj=7)
    b.wake(0, 100, ms(0.6), context="softirq", irq="net")
    b.run(100, ms(0.6), ret=10)
    b.busy(100, ms(0.6), ms(3000))
    b.syscall(100, ms(3000), "write", obj=7, ret=100)
    b.block(100, ms(3000.5), "read", "read", obj=7)
    ops = [MH.NetOp(0, ms(0.5), 100, 100, 5, True, True, C, S, 1000, 10),
           MH.NetOp(1, ms(0.6), 100, 100, 7, False, True, S, C, 1000, 10),
           MH.NetOp(1, ms(3000), 100, 100, 7, True, True, S, C, 5000, 100),
           MH.NetOp(0, ms(3001), 100, 100, 5, False, True, C, S, 5000, 100)]
    traces = [_trace(a, "web"), _trace(b, "api")]
    if not with_server:
        traces, ops = traces[:1], [o for o in ops if o.host == 0]
    m = MH.merge(traces, list(paths)[:len(traces)], ops=ops)
    g = MH.add_host_edges(build_graph(m.rows, trace_start=m.first_ts, trace_end=m.last_ts), m)
    g.time_origin = m.first_ts
    return g

