"""NET_IO records as the BPF side writes them (struct argus_ev_net_io and
argus_ev_net_io_short), for tests that need a real ring buffer with crafted
connection traffic."""
import ipaddress
import struct

from argus.tracer import producer, schema

# header, then fd, dir, proto, family, reserved, bytes, seq, local_port,
# remote_port, reserved2, inode, local_addr, remote_addr
NET_IO = struct.Struct("<QIIHHHH" "iBBBBIIHHIQ16s16s")
assert NET_IO.size == 88


def addr(text):
    """16 bytes, network order; IPv4 v4-mapped as the record keeps it."""
    a = ipaddress.ip_address(text)
    return (ipaddress.IPv6Address("::ffff:" + text) if a.version == 4 else a).packed


def record(ts, tid, dir_, proto, local, remote, seq, nbytes, family=2, fd=5, inode=77, pid=100):
    """local / remote: (ip text, port)."""
    return NET_IO.pack(ts, pid, tid, schema.NET_IO, NET_IO.size, 0, 0,
                       fd, dir_, proto, family, 0, nbytes, seq, local[1], remote[1], 0, inode,
                       addr(local[0]), addr(remote[0]))


# header, then inode, bytes, seq, fd, dir, proto (struct argus_ev_net_io_short)
NET_IO_SHORT = struct.Struct("<QIIHHHH" "IIIHBB")
assert NET_IO_SHORT.size == 40


def short_record(ts, tid, dir_, proto, seq, nbytes, fd=5, inode=77, pid=100):
    """The 40-byte record of a call on a socket whose full record (record())
    carries the 4-tuple."""
    return NET_IO_SHORT.pack(ts, pid, tid, schema.NET_IO_SHORT, NET_IO_SHORT.size, 0, 0,
                             inode, nbytes, seq, fd, dir_, proto)


def write_buffer(path, records, size=1 << 20):
    producer.create_buffer(path, size, chunk_size=64 << 10)
    with producer.Producer(path, 1) as p:
        for rec in records:
            p.write_raw(rec)


# The syscall records of one call (schema v4 / v6), for implied NET_IO rows:
# header flags = the dir of the NET_IO the call stands for (0: none).
SYSCALL = struct.Struct("<QIIHHHH" "IiIIiI")            # nr, aux, obj, obj2, ret, exit_delta_ns
SYSCALL_ENTER = struct.Struct("<QIIHHHH" "IiII")         # the 40-byte form
SYSCALL_EXIT = struct.Struct("<QIIHHHH" "Ii")            # the 32-byte form
NR_WRITE, NR_READ = 1, 0


def call(ts, tid, nr, fd, inode, ret, implied=0, pid=100, cpu=0, delta=50):
    """One SYSCALL record (enter at ts, exit at ts + delta); implied: the
    dir its NET_IO row stands for (the exit record's header.flags)."""
    return SYSCALL.pack(ts, pid, tid, schema.SYSCALL, SYSCALL.size, cpu, implied,
                        nr, ret, fd, inode, ret, delta)


def enter(ts, tid, nr, fd, inode, pid=100, cpu=0):
    return SYSCALL_ENTER.pack(ts, pid, tid, schema.SYSCALL_ENTER, SYSCALL_ENTER.size, cpu, 0, nr, 0, fd, inode)


def exit_(ts, tid, nr, ret, implied=0, pid=100, cpu=0):
    return SYSCALL_EXIT.pack(ts, pid, tid, schema.SYSCALL_EXIT, SYSCALL_EXIT.size, cpu, implied, nr, ret)
