"""netio: NET_IO records written into a real ring buffer, read back through the C decoder."""
from argus.tracer import netio, reader, schema, stream
from support.net_records import record, short_record, write_buffer

SEND, RECV, TCP, UDP = schema.NET_SEND, schema.NET_RECV, 6, 17
A, B = ("10.0.0.1", 40000), ("10.0.0.2", 6379)


def test_records_become_rows_with_addresses_ports_and_seq(tmp_path):
    path = str(tmp_path / "t.argus")
    write_buffer(path, [
        record(1000, 7, schema.NET_SEND, 6, ("10.0.0.1", 40000), ("10.0.0.2", 80), 0xFFFFFFF0, 100),
        record(2000, 8, schema.NET_RECV, 17, ("2001:db8::1", 5353), ("fe80::2", 9999), 0, 12, family=10, fd=9),
    ])
    rows = netio.net_io_rows(reader.decode_file(path))
    assert rows == [
        netio.NetIo(1000, 100, 7, 5, "send", "tcp", ("10.0.0.1", 40000), ("10.0.0.2", 80), 0xFFFFFFF0, 100),
        netio.NetIo(2000, 100, 8, 9, "recv", "udp", ("2001:db8::1", 5353), ("fe80::2", 9999), None, 12),
    ]
    assert rows[0].peer_key() == ("tcp", ("10.0.0.2", 80), ("10.0.0.1", 40000))


def test_a_full_decode_keeps_the_other_columns_and_a_zero_address(tmp_path):
    path = str(tmp_path / "t.argus")
    write_buffer(path, [record(5, 1, schema.NET_SEND, 17, ("::", 0), ("127.0.0.1", 9), 0, 3, inode=88)])
    trace = reader.decode_file(path)
    (row,) = trace.rows[trace.rows["type"] == schema.NET_IO]
    values = schema.row_values(row)
    assert values["inode"] == 88 and values["bytes"] == 3 and values["remote_port"] == 9
    (rec,) = netio.net_io_rows(trace)
    assert rec.local == ("::", 0) and rec.remote == ("127.0.0.1", 9) and rec.seq is None


def test_a_growing_window_keeps_each_rows_addresses(tmp_path):
    """stream.GrowingWindow appends the side arrays of the parts it decodes:
    the address index of each NET_IO row is rebased with them."""
    path = str(tmp_path / "t.argus")
    recs = [record(1000 + i, 1, schema.NET_SEND, 17, (f"10.0.{i // 256}.{i % 256}", i), ("10.9.9.9", 53), 0, i + 1)
            for i in range(3000)]                  # ~4 chunks of 64 KiB
    write_buffer(path, recs)
    want = netio.net_io_rows(reader.decode_file(path))
    grow = stream.GrowingWindow(path)
    grow.load(2000, 2500)
    got = netio.net_io_rows(grow.load(None, None))
    assert len(want) == 3000 and got == want


def test_a_short_record_takes_the_tuple_of_its_sockets_full_record(tmp_path):
    path = str(tmp_path / "t.argus")
    write_buffer(path, [
        record(1000, 7, SEND, TCP, A, B, 500, 10, inode=41),
        short_record(2000, 8, RECV, TCP, 900, 20, inode=41),      # another thread, same process
        short_record(3000, 7, SEND, TCP, 510, 30, fd=6, inode=41),
    ])
    trace = reader.decode_file(path)
    assert netio.net_io_rows(trace) == [
        netio.NetIo(1000, 100, 7, 5, "send", "tcp", A, B, 500, 10),
        netio.NetIo(2000, 100, 8, 5, "recv", "tcp", A, B, 900, 20),
        netio.NetIo(3000, 100, 7, 6, "send", "tcp", A, B, 510, 30),
    ]
    net = trace.rows[trace.rows["type"] == schema.NET_IO]
    assert net["pad"].tolist() == [schema.NET_TUPLE_OWN, schema.NET_TUPLE_COPIED, schema.NET_TUPLE_COPIED]
    assert net["irq"].tolist() == [2, 2, 2]              # the family too
    # a type-filtered decode keeps them: they are NET_IO rows
    assert netio.net_io_rows(reader.decode_file(path, types=[schema.NET_IO])) == netio.net_io_rows(trace)


def test_a_short_record_before_the_first_full_one_takes_the_next(tmp_path):
    """A window that starts between two full records of a socket: the tuple
    is the same after."""
    path = str(tmp_path / "t.argus")
    write_buffer(path, [
        short_record(1000, 7, SEND, UDP, 0, 12, inode=9),
        record(2000, 7, SEND, UDP, A, B, 0, 13, inode=9),
        short_record(3000, 7, RECV, UDP, 0, 14, inode=9),
    ])
    rows = netio.net_io_rows(reader.decode_file(path))
    assert [(r.local, r.remote, r.proto, r.seq, r.bytes) for r in rows] == [
        (A, B, "udp", None, 12), (A, B, "udp", None, 13), (A, B, "udp", None, 14)]


def test_reused_inode_numbers_in_two_processes_stay_apart(tmp_path):
    """The socket is (pid, inode): the nearest full record of another
    process with the same inode number is never taken."""
    path = str(tmp_path / "t.argus")
    C = ("192.168.1.5", 5000)
    write_buffer(path, [
        record(1000, 7, SEND, TCP, A, B, 1, 1, inode=50, pid=100),
        record(1500, 70, SEND, TCP, C, A, 2, 1, inode=50, pid=200),
        short_record(2000, 7, SEND, TCP, 2, 5, inode=50, pid=100),
        short_record(2500, 70, SEND, TCP, 3, 5, inode=50, pid=200),
        short_record(2600, 71, RECV, TCP, 4, 5, inode=51, pid=200),   # no full record of its socket
    ])
    trace = reader.decode_file(path)
    got = [(r.pid, r.local, r.remote) for r in netio.net_io_rows(trace)]
    assert got == [(100, A, B), (200, C, A), (100, A, B), (200, C, A), (200, None, None)]
    # shown, never dropped: pad says the tuple is unknown, the addresses are zeros
    (row,) = trace.rows[(trace.rows["type"] == schema.NET_IO) & (trace.rows["obj2"] == 51)]
    assert int(row["pad"]) == schema.NET_TUPLE_UNKNOWN and not netio.tuple_known(row)
    assert netio.endpoints(row, trace.frames) == (("::", 0), ("::", 0))


def test_windows_take_the_tuple_from_an_earlier_window(tmp_path):
    """stream.iter_windows and a GrowingWindow resolve a short row whose
    socket's full record is in another window, as one decode does."""
    path = str(tmp_path / "t.argus")
    recs = [record(1000, 1, SEND, TCP, A, B, 0, 1, inode=3)]
    recs += [short_record(1001 + i, 1, SEND, TCP, i, 1, inode=3) for i in range(8000)]   # ~5 chunks of 64 KiB
    write_buffer(path, recs)
    want = netio.net_io_rows(reader.decode_file(path))
    assert len(want) == 8001 and {(r.local, r.remote) for r in want} == {(A, B)}
    got = [r for t in stream.iter_windows(path, chunks_per_window=1) for r in netio.net_io_rows(t)]
    assert got == want
    grow = stream.GrowingWindow(path)
    part = netio.net_io_rows(grow.load(8000, 8500))
    assert {r.local for r in part} == {None}                 # alone, the window has no full record
    assert netio.net_io_rows(grow.load(None, None)) == want


# Implied rows (schema v6): a call that continues its thread's chain on its
# socket has no NET_IO record, only its exit record's header.flags.  Each
# test writes the same calls twice, as the v5 tracer wrote them (a
# NET_IO_SHORT for every call after the full record) and as the v6 tracer
# does, and wants the same rows from both.

def two_buffers(tmp_path, calls, extra_v6=(), stream_seq=None):
    """calls: (ts, tid, dir, fd, inode, nbytes, kind), kind 'full' |
    'short' | 'implied' | 'lost' (a call whose NET_IO is in neither buffer,
    as when the tracer could not write its record: it breaks its chain);
    seq is the socket's own count per direction (the kernel's accounting).
    Returns the decodes of the v5 and the v6 buffer."""
    from support.net_records import call, NR_READ, NR_WRITE
    seqs = dict(stream_seq or {})
    v5, v6 = [], []
    for ts, tid, dir_, fd, inode, n, kind in calls:
        nr = NR_WRITE if dir_ == SEND else NR_READ
        seq = seqs.get((inode, dir_), 1000 * inode)
        seqs[(inode, dir_)] = (seq + n) & 0xFFFFFFFF
        exit_ts = ts + 50
        v5.append(call(ts, tid, nr, fd, inode, n))
        v6.append(call(ts, tid, nr, fd, inode, n, implied=dir_ if kind == "implied" else 0))
        if kind == "full":
            full = record(exit_ts, tid, dir_, TCP, A, B, seq, n, fd=fd, inode=inode)
            v5.append(full)
            v6.append(full)
        elif kind in ("short", "implied"):
            v5.append(short_record(exit_ts, tid, dir_, TCP, seq, n, fd=fd, inode=inode))
            if kind == "short":
                v6.append(v5[-1])
    v6 += list(extra_v6)
    out = []
    for name, recs in (("v5", v5), ("v6", v6)):
        path = str(tmp_path / f"{name}.argus")
        write_buffer(path, recs)
        out.append(reader.decode_file(path))
    return out


def assert_same_rows(old, new):
    assert new.rows.dtype == old.rows.dtype
    assert new.rows.tolist() == old.rows.tolist()
    assert new.frames.tolist() == old.frames.tolist()
    assert netio.net_io_rows(new) == netio.net_io_rows(old)


def test_calls_that_continue_their_chain_are_rebuilt_as_their_short_records(tmp_path):
    calls = [(1000, 7, SEND, 5, 41, 10, "full"),
             (2000, 7, SEND, 5, 41, 20, "implied"),
             (3000, 7, RECV, 5, 41, 7, "short"),         # a direction's first call after the full record
             (4000, 7, SEND, 5, 41, 30, "implied"),
             (5000, 7, RECV, 5, 41, 9, "implied"),
             (6000, 7, SEND, 5, 41, 0xFFFFFFF, "implied"),
             (7000, 7, SEND, 5, 41, 40, "implied")]
    old, new = two_buffers(tmp_path, calls, stream_seq={(41, SEND): 0xFFFFFF00})    # seq wraps
    assert_same_rows(old, new)
    assert new.net_io_implied == 5 and old.net_io_implied == 0
    seqs = [r.seq for r in netio.net_io_rows(new) if r.dir == "send"]
    assert seqs == [0xFFFFFF00, 0xFFFFFF0A, 0xFFFFFF1E, (0xFFFFFF3C) & 0xFFFFFFFF, (0xFFFFFF3C + 0xFFFFFFF) & 0xFFFFFFFF]
    # every exit row's pad is cleared, as v5's were
    assert not new.rows["pad"][new.rows["type"] == schema.SYSCALL_EXIT].any()
    # a type-filtered decode rebuilds them too (from syscall rows it then drops)
    only = reader.decode_file(new.path, types=[schema.NET_IO])
    assert set(only.rows["type"].tolist()) == {schema.NET_IO}
    assert netio.net_io_rows(only) == netio.net_io_rows(old)


def test_a_second_writer_breaks_the_chain_and_each_thread_has_its_own(tmp_path):
    """Thread 8 writes on thread 7's socket: its call is a short record (the
    tracer's chain word names another lineage), so is thread 7's next one;
    the implied calls after each continue their own thread's rows."""
    calls = [(1000, 7, SEND, 5, 41, 10, "full"),
             (2000, 8, SEND, 5, 41, 5, "short"),
             (2500, 8, SEND, 5, 41, 6, "implied"),
             (3000, 7, SEND, 5, 41, 5, "short"),
             (4000, 7, SEND, 5, 41, 3, "implied"),
             (4500, 8, SEND, 5, 41, 2, "short"),
             (5000, 8, SEND, 5, 41, 4, "implied")]
    old, new = two_buffers(tmp_path, calls)
    assert_same_rows(old, new)
    assert new.net_io_implied == 3


def test_an_implied_call_never_takes_another_threads_chain(tmp_path):
    """A flagged exit whose thread has no row of the socket before it: no
    row (the tracer never flags one; a reader that guessed would take thread
    7's seq)."""
    from support.net_records import call, NR_WRITE
    path = str(tmp_path / "t.argus")
    write_buffer(path, [call(1000, 7, NR_WRITE, 5, 41, 10), record(1050, 7, SEND, TCP, A, B, 0, 10, inode=41),
                        call(2000, 8, NR_WRITE, 5, 41, 10, implied=SEND)])
    trace = reader.decode_file(path)
    assert [r.tid for r in netio.net_io_rows(trace)] == [7] and trace.net_io_implied == 0
    assert not trace.rows["pad"][trace.rows["type"] == schema.SYSCALL_EXIT].any()


def test_an_fd_closed_and_reused_by_another_socket(tmp_path):
    """fd 5 is socket 41, then (close, socket) socket 42: the enter's inode
    names the chain, so the calls on the new socket continue its own full
    record, and one flagged before any record of 42 gets no row."""
    calls = [(1000, 7, SEND, 5, 41, 10, "full"),
             (2000, 7, SEND, 5, 41, 20, "implied"),
             (3000, 7, SEND, 5, 42, 7, "full"),
             (4000, 7, SEND, 5, 42, 8, "implied"),
             (5000, 7, SEND, 6, 41, 9, "implied")]          # socket 41 again, through a dup'd fd
    old, new = two_buffers(tmp_path, calls)
    assert_same_rows(old, new)
    rows = netio.net_io_rows(new)
    assert [(r.fd, r.seq) for r in rows] == [(5, 41000), (5, 41010), (5, 42000), (5, 42007), (6, 41030)]
    # the new socket's implied call with its full record lost: no row
    from support.net_records import call, NR_WRITE
    path = str(tmp_path / "reuse.argus")
    write_buffer(path, [call(1000, 7, NR_WRITE, 5, 41, 10), record(1050, 7, SEND, TCP, A, B, 0, 10, inode=41),
                        call(2000, 7, NR_WRITE, 5, 42, 10, implied=SEND)])
    assert [r.seq for r in netio.net_io_rows(reader.decode_file(path))] == [0]


def test_records_lost_in_between_stop_the_rebuild(tmp_path):
    """Rows are rebuilt only when their chain is certainly whole; else the
    rows stop, none is guessed:
      - the chain's last record ANCHOR_MAX_NS or more before (the tracer
        writes one at least that often: one this old was lost);
      - an exit whose enter is not its thread's previous syscall row (an
        enter lost), or was on another CPU."""
    from support.net_records import call, enter, exit_, NR_WRITE
    path = str(tmp_path / "t.argus")
    second = netio.ANCHOR_MAX_NS
    write_buffer(path, [
        call(1000, 7, NR_WRITE, 5, 41, 10), record(1050, 7, SEND, TCP, A, B, 0, 10, inode=41),
        call(2000, 7, NR_WRITE, 5, 41, 10, implied=SEND),                    # seq 10
        call(1000 + second, 7, NR_WRITE, 5, 41, 10, implied=SEND),           # the anchor is 1 s old
        call(2000 + second, 7, NR_WRITE, 5, 41, 10, implied=SEND),           # and so on to the next record
        call(3000 + second, 7, NR_WRITE, 5, 41, 10), short_record(3050 + second, 7, SEND, TCP, 40, 10, inode=41),
        call(4000 + second, 7, NR_WRITE, 5, 41, 10, implied=SEND),           # seq 50
        exit_(5000 + second, 7, NR_WRITE, 10, implied=SEND),                 # its enter lost
        enter(6000 + second, 7, NR_WRITE, 5, 41, cpu=1), exit_(6050 + second, 7, NR_WRITE, 10, implied=SEND),
    ])
    trace = reader.decode_file(path)
    assert [(r.ts_ns, r.seq) for r in netio.net_io_rows(trace)] == [
        (1050, 0), (2050, 10), (3050 + second, 40), (4050 + second, 50)]
    assert trace.net_io_implied == 2


def test_windows_rebuild_the_rows_whose_anchor_is_before_them(tmp_path):
    """A window decode (since_ns) looks ANCHOR_MAX_NS back for the anchors:
    stream.iter_windows and a GrowingWindow give the rows of one decode."""
    calls = [(1000, 7, SEND, 5, 3, 10, "full")]
    calls += [(2000 + 100 * i, 7, SEND if i % 3 else RECV, 5, 3, 1 + i % 7,
               "short" if i % 500 < 2 else "implied") for i in range(6000)]
    old, new = two_buffers(tmp_path, calls)
    assert_same_rows(old, new)
    want = netio.net_io_rows(new)
    assert len(want) == 6001
    got = [r for t in stream.iter_windows(new.path, chunks_per_window=1) for r in netio.net_io_rows(t)]
    assert got == want
    # a window alone (no full record in it: no tuple) has the rows of its
    # span that the v5 buffer's window has; rows past its end that a
    # decoded chunk holds are records there, implied ones only up to it
    mid, end = 2000 + 100 * 3000, 2000 + 100 * 4000
    parts = []
    for t in (old, new):
        grow = stream.GrowingWindow(t.path)
        parts.append([(r.ts_ns, r.tid, r.dir, r.seq, r.bytes, r.local)
                      for r in netio.net_io_rows(grow.load(mid, end)) if mid <= r.ts_ns <= end])
        assert netio.net_io_rows(grow.load(None, None)) == want
    assert parts[1] == parts[0] and len(parts[0]) == 1000 and {p[-1] for p in parts[0]} == {None}


def test_the_verify_hook_checks_each_rebuilt_row_against_its_record(tmp_path):
    """ARGUS_NET_IO_VERIFY=1 (a test hook of argusd): an implied call keeps
    its short record; the reader rebuilds its row without it, compares, and
    keeps the record's row."""
    from support.net_records import call, NR_WRITE
    path = str(tmp_path / "t.argus")
    write_buffer(path, [
        call(1000, 7, NR_WRITE, 5, 41, 10), record(1050, 7, SEND, TCP, A, B, 0, 10, inode=41),
        call(2000, 7, NR_WRITE, 5, 41, 20, implied=SEND), short_record(2050, 7, SEND, TCP, 10, 20, inode=41),
        call(3000, 7, NR_WRITE, 5, 41, 30, implied=SEND), short_record(3050, 7, SEND, TCP, 30, 30, inode=41),
        call(4000, 7, NR_WRITE, 5, 41, 40, implied=SEND), short_record(4050, 7, SEND, TCP, 61, 40, inode=41),
        call(5000, 8, NR_WRITE, 5, 41, 40, implied=SEND), short_record(5050, 8, SEND, TCP, 100, 40, inode=41),
    ])
    trace = reader.decode_file(path)
    assert [r.seq for r in netio.net_io_rows(trace)] == [0, 10, 30, 61, 100]     # the records' own rows
    assert trace.net_io_check == netio.Rebuilt(implied=0, verified=3, mismatched=1, unresolved=1)
