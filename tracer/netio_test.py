"""netio: NET_IO records written into a real ring buffer, read back through the C decoder."""
from argus.tracer import netio, reader, schema, stream
from support.net_records import record, write_buffer


def test_records_become_rows_with_addresses_ports_and_seq(tmp_path):
    path = str(tmp_path / "t.argus")
    write_buffer(path, [
        record(1000, 7, schema.NET_SEND, 6, ("10.0.0.1", 40000), ("10.0.0.2", 80), 0xFFFFFFF0, 100),
        record(2000, 8, schema.NET_RECV, 17, ("2001:db8::1", 5353), ("fe80::2", 9999), 0, 12, family=10, fd=9),
    ])
    rows = netio.net_io_rows(path)
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
