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
