"""The ring index: long waits and out-of-loop spans of main threads, as argusd
saw them go past, so `argus hangs` and `argus debug` find a hang without
decoding the buffer (docs/ring-buffer.md, "The ring index").

argusd (tracer/daemon/hang_index.c) keeps one index file per buffer, in the
flight recorder's verified directory (STATE_DIR/snapshots/ring-<inode>.idx,
0600, created through safe_dir).  It holds a header, an OPEN table (the
intervals still going on, rewritten every 100 ms under a seqlock) and a RING
of the intervals that ended, appended as they end.  All integers are
little-endian; the file names its own geometry; every offset is checked
against the file's size before it is used.

Algorithm (read): fstat the buffer (inode), open the index without following
links (a regular file of root's or ours, nobody else may open it), pread the
header and check magic, version, sizes, the buffer's inode and creation
stamp; then read next_seq (n0), the ring, next_seq again (n1), and keep the
ring entries whose stored seq s satisfies n1 - nentries < s <= n0 and whose
slot is (s - 1) % nentries: an entry written while the ring was read, or
overwritten since, is never taken in halves.  The OPEN table is read between
two even, equal open_gen values (retried a few times).

Invariants: nothing read is trusted before it is bounds-checked; a missing
index is None (the caller decodes instead), a damaged one raises TraceError
with one line naming the file and the field.
"""
import errno
import os
import stat
import struct
import time

import numpy as np

from . import reader

MAGIC = b"ARGUSIX\0"
VERSION = 1
HEADER = struct.Struct("<8sIIIIII QQQQ QQII Q 32x")
HEADER_SIZE = HEADER.size            # 128
assert HEADER_SIZE == 128
ENTRY_DTYPE = np.dtype([
    ("seq", "<u8"), ("start_ns", "<u8"), ("end_ns", "<u8"), ("pid", "<u4"), ("tid", "<u4"),
    ("kind", "u1"), ("reason", "u1"), ("guess", "u1"), ("flags", "u1"), ("nr", "<u4"),
    ("obj", "<u8"), ("comm", "S16"),
])
ENTRY_SIZE = ENTRY_DTYPE.itemsize    # 64
assert ENTRY_SIZE == 64

KIND_WAIT, KIND_OUT_OF_LOOP = 1, 2   # a blocking wait in one syscall; the detector's span out of the loop
GUESS_NAMES = {1: "LongWait", 2: "RepeatedYield", 3: "LongRunning"}
FLAG_LOOP, FLAG_ONGOING, FLAG_USER = 1, 2, 4
MAX_ENTRIES = 1 << 22                # geometry a reader accepts (argusd writes 65536 + 1024)
OPEN_TRIES = 20


class RingIndex:
    """One read of an index: header fields plus `entries` (ENTRY_DTYPE, the
    ended intervals then the open ones, open ones flagged FLAG_ONGOING)."""

    def __init__(self, path, head, entries, covers_from_ns):
        self.path = path
        self.head = head
        self.entries = entries
        self.since_ns = head["since_ns"]          # the first record argusd saw with this index
        self.min_ns = head["min_ns"]              # intervals shorter than this are not in it
        self.last_ts = head["last_ts"]
        self.daemon_pid = head["daemon_pid"]
        self.covers_from_ns = covers_from_ns      # every interval ending after this is in it

    def covers(self, since_ns):
        """Whether every interval of min_ns or more that ended at or after
        since_ns is in the index."""
        return self.covers_from_ns <= since_ns


def index_name(buffer_path):
    """The index file's name in the flight recorder's directory for a buffer."""
    return f"ring-{os.stat(buffer_path).st_ino}.idx"


def _parse_header(raw, path, size):
    if len(raw) < HEADER_SIZE:
        raise reader.TraceError(f"{path}: truncated index: {len(raw)} bytes, smaller than the {HEADER_SIZE}-byte header")
    (magic, version, header_size, entry_size, nentries, nopen, flags, ino, created_ns, since_ns, min_ns,
     next_seq, open_gen, open_count, daemon_pid, last_ts) = HEADER.unpack_from(raw)
    if magic != MAGIC:
        raise reader.TraceError(f"{path}: bad magic at offset 0x0: not an Argus ring index")
    if version != VERSION:
        raise reader.TraceError(f"{path}: unsupported index version {version} at offset 0x8 (this build reads 1)")
    if header_size != HEADER_SIZE:
        raise reader.TraceError(f"{path}: bad header_size {header_size} at offset 0xc")
    if entry_size != ENTRY_SIZE:
        raise reader.TraceError(f"{path}: bad entry_size {entry_size} at offset 0x10")
    if not 0 < nentries <= MAX_ENTRIES:
        raise reader.TraceError(f"{path}: bad nentries {nentries} at offset 0x14")
    if nopen > MAX_ENTRIES:
        raise reader.TraceError(f"{path}: bad nopen {nopen} at offset 0x18")
    need = HEADER_SIZE + (nopen + nentries) * ENTRY_SIZE
    if size < need:
        raise reader.TraceError(f"{path}: truncated index: file is {size} bytes, its geometry needs {need}")
    return dict(nentries=nentries, nopen=nopen, ino=ino, created_ns=created_ns, since_ns=since_ns, min_ns=min_ns,
                next_seq=next_seq, open_gen=open_gen, open_count=min(open_count, nopen), daemon_pid=daemon_pid,
                last_ts=last_ts)


def _entries(raw):
    return np.frombuffer(raw, dtype=ENTRY_DTYPE, count=len(raw) // ENTRY_SIZE)


def _read_open(fd, path, head, size):
    """The OPEN table between two equal, even open_gen values; [] when it
    kept changing (a writer that died mid-update leaves it odd)."""
    off = HEADER_SIZE
    for _ in range(OPEN_TRIES):
        h0 = _parse_header(os.pread(fd, HEADER_SIZE, 0), path, size)
        if h0["open_gen"] % 2:
            time.sleep(0.001)
            continue
        table = _entries(os.pread(fd, h0["open_count"] * ENTRY_SIZE, off))
        h1 = _parse_header(os.pread(fd, HEADER_SIZE, 0), path, size)
        if h1["open_gen"] == h0["open_gen"]:
            table = table[table["seq"] != 0].copy()
            table["flags"] |= FLAG_ONGOING
            return table, h1
    return _entries(b""), head


def _read_ring(fd, head, path, size):
    n = head["nentries"]
    off = HEADER_SIZE + head["nopen"] * ENTRY_SIZE
    n0 = head["next_seq"]
    ring = _entries(os.pread(fd, n * ENTRY_SIZE, off))
    n1 = _parse_header(os.pread(fd, HEADER_SIZE, 0), path, size)["next_seq"]
    s = ring["seq"].astype(np.int64)
    slot = np.arange(n, dtype=np.int64)
    keep = (s > max(0, n1 - n)) & (s <= n0) & ((s - 1) % n == slot)
    return ring[keep], n0, n1


def read_index(dir_fd, name, buffer_path, buffer_created_ns, shown=None):
    """The index `name` in the verified directory dir_fd for the buffer (its
    inode must match, and its creation stamp), or None when there is none.
    Raises TraceError (one line) for an index that is not safe to read or is
    damaged."""
    shown = shown or name
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ENOENT:
            return None
        if e.errno == errno.ELOOP:
            raise reader.TraceError(f"{shown}: is a symbolic link: refused")
        raise reader.TraceError(f"{shown}: {e.strerror}")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise reader.TraceError(f"{shown}: not a regular file")
        if st.st_uid not in (0, os.geteuid()):
            raise reader.TraceError(f"{shown}: owned by uid {st.st_uid}: refused")
        if st.st_mode & 0o077:
            raise reader.TraceError(f"{shown}: mode {stat.S_IMODE(st.st_mode):04o} lets group or others open it")
        head = _parse_header(os.pread(fd, HEADER_SIZE, 0), shown, st.st_size)
        if head["ino"] != os.stat(buffer_path).st_ino or head["created_ns"] != int(buffer_created_ns):
            return None          # an index of an earlier buffer at the same place
        ring, n0, n1 = _read_ring(fd, head, shown, st.st_size)
        opened, head = _read_open(fd, shown, head, st.st_size)
    finally:
        os.close(fd)
    entries = np.concatenate([ring, opened]) if len(opened) else ring.copy()
    entries = entries[entries["end_ns"] >= entries["start_ns"]]
    # ring overwritten: intervals that ended before the oldest one kept may be gone
    covers = head["since_ns"]
    if n1 > head["nentries"] and len(ring):
        covers = max(covers, int(ring["end_ns"].min()))
    return RingIndex(shown, head, entries, covers)
