"""netio: NET_IO records written into a real ring buffer, read back through the C decoder."""
import ipaddress
import struct

from argus.tracer import netio, producer, reader, schema

# struct argus_ev_net_io after the header: fd, dir, proto, family, reserved, bytes, seq,
# local_port, remote_port, reserved2, inode, local_addr, remote_addr
NET_IO = struct.Struct("<QIIHHHH" "iBBBBIIHHIQ16s16s")
assert NET_IO.size == 88


def v4(text):
    return ipaddress.IPv6Address("::ffff:" + text).packed


def record(ts, tid, dir_, proto, local, remote, seq, nbytes, family=2, fd=5, inode=77):
    return NET_IO.pack(ts, 100, tid, schema.NET_IO, NET_IO.size, 0, 0,
                       fd, dir_, proto, family, 0, nbytes, seq, local[1], remote[1], 0, inode,
                       local[0], remote[0])


def write_buffer(path, records):
    producer.create_buffer(path, 1 << 20, chunk_size=64 << 10)
    with producer.Producer(path, 1) as p:
        for rec in records:
            p.write_raw(rec)


def test_records_become_rows_with_addresses_ports_and_seq(tmp_path):
    path = str(tmp_path / "t.argus")
    v6a, v6b = ipaddress.IPv6Address("2001:db8::1").packed, ipaddress.IPv6Address("fe80::2").packed
    write_buffer(path, [
        record(1000, 7, schema.NET_SEND, 6, (v4("10.0.0.1"), 40000), (v4("10.0.0.2"), 80), 0xFFFFFFF0, 100),
        record(2000, 8, schema.NET_RECV, 17, (v6a, 5353), (v6b, 9999), 0, 12, family=10, fd=9, inode=88),
    ])
    rows = netio.net_io_rows(path)
    assert rows == [
        netio.NetIo(1000, 100, 7, 5, "send", "tcp", ("10.0.0.1", 40000), ("10.0.0.2", 80), 0xFFFFFFF0, 100),
        netio.NetIo(2000, 100, 8, 9, "recv", "udp", ("2001:db8::1", 5353), ("fe80::2", 9999), None, 12),
    ]
    assert rows[0].peer_key() == ("tcp", ("10.0.0.2", 80), ("10.0.0.1", 40000))


def test_a_full_decode_keeps_the_other_rows_and_the_inode(tmp_path):
    path = str(tmp_path / "t.argus")
    write_buffer(path, [record(5, 1, schema.NET_SEND, 17, (bytes(16), 0), (v4("127.0.0.1"), 9), 0, 3)])
    trace = reader.decode_file(path)
    (row,) = trace.rows[trace.rows["type"] == schema.NET_IO]
    values = schema.row_values(row)
    assert values["inode"] == 77 and values["bytes"] == 3 and values["remote_port"] == 9
    (rec,) = netio.net_io_rows(trace)
    assert rec.local == ("::", 0) and rec.remote == ("127.0.0.1", 9) and rec.seq is None
