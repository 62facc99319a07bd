"""Reading traces: the C decoder's rows as one numpy array, plus buffer statistics.

decode_file() hands the rows malloc'd by argus_decode_file to numpy without a
copy; the C buffer is freed (argus_decode_free) when the last array or view
referring to it is garbage collected.
"""
import ctypes
import dataclasses
import weakref

import numpy as np

from . import native, netio, schema


class TraceError(Exception):
    """A trace cannot be read; the message is one line naming the file and the problem."""


@dataclasses.dataclass
class Trace:
    path: str
    rows: np.ndarray              # schema.ROW_DTYPE, sorted by (ts_ns, chunk seq, position)
    nrows: int
    bytes: int                    # record bytes decoded into rows
    torn_chunks: int              # chunks that changed while being read (live writer)
    bad_records: int              # corrupt records (each drops the rest of its chunk)
    unknown_records: int          # well-formed records of types newer than this reader
    records_overwritten: int      # lost to ring wrap-around
    records_lost: int             # dropped before reaching the file (by the tracer)
    first_ts: int
    last_ts: int
    created_realtime_ns: int
    created_ns: int
    warning: str = ""             # first bad record when decoded with strict=False
    # sched_switches the kernel never reported (its holes, not drops; header
    # field, 0 in files older than it, whose records_lost may hold them).
    switches_unreported: int = 0
    # Side arrays that USER_STACK and MAPPING rows index (tracer/ringbuf/argus_decode.h):
    frames: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.uint64))
    strings: bytes = b""
    # decode_file(since_ns=, until_ns=): the window asked for, and the first ts of
    # the rows that came from chunks in it (rows before it are state records:
    # PROC_SNAPSHOT, THREAD_NAME, FD_INFO, MAPPING).  None: the whole buffer.
    window: tuple = None
    first_window_ts: int = 0
    # Every valid record read, rows or not (a type-filtered decode still sees
    # the whole time range), and the time range of the dropped (torn or
    # damaged) chunks, 0 when none.
    seen_first_ts: int = 0
    seen_last_ts: int = 0
    torn_first_ts: int = 0
    torn_last_ts: int = 0
    # NET_IO rows rebuilt from their calls' syscall rows (schema v6: the
    # tracer wrote no record for them; tracer/netio.py rebuild_implied).
    net_io_implied: int = 0
    # netio.Rebuilt: the same, and the checks of a trace recorded with the
    # test hook ARGUS_NET_IO_VERIFY=1 (kext/linux/net_io.bpf.h)
    net_io_check: object = None
    chain: np.ndarray = None      # decode_file(keep_chain=True): chain_rows of the window
    # tracer/focus.py: the pids a focused decode kept (None: every process).
    focus: frozenset = None
    focus_note: str = ""         # what a focused decode's row cap left out ("": nothing)
    # The host that recorded the buffer (file header; "" in files older than
    # the fields): its hostname and boot id in the 36-character UUID form.
    hostname: str = ""
    boot_id: str = ""

    def stack_frames(self, row):
        """The frames of one USER_STACK row (innermost first), a view."""
        return schema.stack_frames(row, self.frames)

    def mapping_path(self, row):
        """The path of one MAPPING row."""
        return schema.mapping_path(row, self.strings)

    @property
    def wall_offset_ns(self):
        """CLOCK_REALTIME - CLOCK_MONOTONIC for the trace's timestamps, from the
        file header's creation stamps (docs/ring-buffer.md); None when the
        header has none (a realtime stamp of 0: a kdebug V1 import)."""
        if not self.created_realtime_ns:
            return None
        return int(self.created_realtime_ns) - int(self.created_ns)

    def wall_ns(self, ts_ns):
        """CLOCK_MONOTONIC ts -> CLOCK_REALTIME ns, using the buffer's creation stamps."""
        return ts_ns - self.created_ns + self.created_realtime_ns


def _free_rows(result):
    native.lib().argus_decode_free(ctypes.byref(result))


def _rows_view(result):
    """A numpy array over result.rows that frees the C buffer when collected."""
    nrows = result.nrows
    if nrows == 0:
        _free_rows(result)
        return schema.empty_rows(0)
    buffer = (ctypes.c_char * (nrows * schema.ROW_DTYPE.itemsize)).from_address(result.rows)
    # Every array or view made from the buffer keeps it alive; the finalizer
    # runs when the last one is gone (or at interpreter exit).
    weakref.finalize(buffer, _free_rows, result)
    return np.frombuffer(buffer, dtype=schema.ROW_DTYPE)


def _side_arrays(result):
    """Copies of the frames and paths: small (one entry per distinct stack and
    mapping), and copied so the rows' finalizer may free the C side at will."""
    frames = np.zeros(0, np.uint64)
    if result.nframes:
        frames = np.ctypeslib.as_array((ctypes.c_uint64 * result.nframes).from_address(result.frames)).copy()
    strings = ctypes.string_at(result.strings, result.strings_len) if result.strings_len else b""
    return frames, strings


def type_mask(types):
    """argus_decode_opts.type_mask selecting these record types."""
    mask = 0
    for t in types:
        mask |= 1 << int(t)
    return mask or 1 << 63          # no type: bit 63 is none (0 would mean every type)


_IMPLIED_FROM = (schema.SYSCALL_ENTER, schema.SYSCALL_EXIT)


def chain_rows(rows, lo=0, hi=(1 << 64) - 1):
    """The rows of a decode (before rebuild_implied) that implied NET_IO rows
    are rebuilt from, with ts in [lo, hi]: a copy, as decode_file's
    lookback of a later window (stream.iter_windows)."""
    ts = rows["ts_ns"]
    return rows[np.isin(rows["type"], _IMPLIED_FROM + (schema.NET_IO,))
                & (ts >= np.uint64(lo)) & (ts <= np.uint64(hi))]


def _rebuild_implied(path, rows, result, window, types, lookback=None):
    """netio.rebuild_implied on a decode's rows (a window decode looks
    netio.ANCHOR_MAX_NS back for the anchors: lookback, else a second decode),
    then the syscall rows a type-filtered decode added for it dropped.
    (rows, netio.Rebuilt)."""
    implied = netio.Rebuilt()
    if types is None or schema.NET_IO in types:
        if window is None or window[0] == 0 or not (
                (rows["type"] == schema.SYSCALL_EXIT) & (rows["pad"] != 0)).any():
            lookback = None
        elif lookback is None:
            lookback = _lookback(path, window[0])
        torn = (int(result.torn_first_ts), int(result.torn_last_ts)) if result.torn_chunks else (0, 0)
        rows, implied = netio.rebuild_implied(rows, torn=torn, lookback=lookback, window=window)
    elif (rows["pad"] != 0).any():
        rows["pad"][rows["type"] == schema.SYSCALL_EXIT] = 0
    if types is not None and schema.NET_IO in types:
        extra = [t for t in _IMPLIED_FROM if t not in types]
        if extra:
            rows = rows[~np.isin(rows["type"], extra)]
    return rows, implied


def _lookback(path, since):
    """The syscall and NET_IO rows of [since - netio.ANCHOR_MAX_NS, since)."""
    lo = max(0, int(since) - netio.ANCHOR_MAX_NS)
    result = native.DecodeResult()
    opts = native.DecodeOpts(since_ns=lo, until_ns=int(since) - 1,
                             type_mask=type_mask(_IMPLIED_FROM + (schema.NET_IO,)), rows_hint=0, keep_state=0)
    rc = native.lib().argus_decode_file_opts(native.fs_path(path), ctypes.byref(opts), ctypes.byref(result))
    if rc < 0:
        return None
    rows = _rows_view(result)      # its side arrays go with it: addresses are not needed here
    return rows[rows["ts_ns"] >= np.uint64(lo)]


def decode_file(path, strict=True, since_ns=None, until_ns=None, types=None, rows_hint=0, keep_state=True,
                lookback=None, keep_chain=False):
    """Decode a ring buffer file into a Trace.

    Raises TraceError for an unreadable file, a bad header or a truncated file.
    A corrupt record raises too unless strict=False, which returns the other
    records and the first problem in Trace.warning.
    since_ns / until_ns: only the chunks whose time range overlaps the window,
    plus the state records from before it unless keep_state=False
    (argus_decode_file_opts).  types: rows of these record types only (every
    record is still validated).  rows_hint: initial row capacity (0: sized
    from the chunk headers of the whole buffer).  lookback: chain_rows of
    [since_ns - netio.ANCHOR_MAX_NS, since_ns), when the caller has them (else
    decoded here when needed); keep_chain: Trace.chain holds this decode's
    chain_rows of its window, for the next one's lookback.
    """
    result = native.DecodeResult()
    window = None
    opts = native.DecodeOpts(since_ns=0, until_ns=(1 << 64) - 1, type_mask=0 if types is None else type_mask(types),
                             rows_hint=max(0, int(rows_hint)), keep_state=1 if keep_state else 0)
    if since_ns is not None or until_ns is not None:
        window = (max(0, int(since_ns or 0)), (1 << 64) - 1 if until_ns is None else max(0, int(until_ns)))
        opts.since_ns, opts.until_ns = window
    if types is not None and schema.NET_IO in types:
        # implied NET_IO rows are rebuilt from the syscall rows (then dropped)
        opts.type_mask = type_mask(tuple(types) + _IMPLIED_FROM)
    rc = native.lib().argus_decode_file_opts(native.fs_path(path), ctypes.byref(opts), ctypes.byref(result))
    if rc < 0:
        raise TraceError(result.error.decode(errors="replace") or f"{path}: decode failed ({rc})")
    warning = ""
    if result.bad_records:
        warning = (f"{result.error.decode(errors='replace')} "
                   f"({result.bad_records} bad record(s), the rest of each such chunk dropped)")
        if strict:
            _free_rows(result)
            raise TraceError(warning)
    frames, strings = _side_arrays(result)
    rows = _rows_view(result)
    chain = chain_rows(rows, *(window or (0, (1 << 64) - 1))) if keep_chain else None
    # Implied NET_IO rows (schema v6) rebuilt from their calls' syscall rows.
    rows, rebuilt = _rebuild_implied(path, rows, result, window, types, lookback)
    # Short NET_IO rows get their socket's 4-tuple: every reader sees whole rows.
    frames = netio.resolve_tuples(rows, frames)
    return Trace(
        path=str(path),
        rows=rows,
        nrows=len(rows),
        net_io_implied=rebuilt.implied,
        net_io_check=rebuilt,
        chain=chain,
        bytes=result.bytes,
        torn_chunks=result.torn_chunks,
        bad_records=result.bad_records,
        unknown_records=result.unknown_records,
        records_overwritten=result.records_overwritten,
        records_lost=result.records_lost,
        switches_unreported=result.switches_unreported,
        first_ts=result.first_ts,
        last_ts=result.last_ts,
        created_realtime_ns=result.created_realtime_ns,
        created_ns=result.created_ns,
        warning=warning,
        frames=frames,
        strings=strings,
        window=window,
        first_window_ts=result.first_window_ts,
        seen_first_ts=result.seen_first_ts,
        seen_last_ts=result.seen_last_ts,
        torn_first_ts=result.torn_first_ts,
        torn_last_ts=result.torn_last_ts,
        hostname=native.hostname_text(result.hostname),
        boot_id=native.boot_id_text(result.boot_id),
    )


def buffer_stats(path):
    """argus_rb_stats of a buffer (opened read-only) as a dict; hostname and
    boot_id as str (boot_id in UUID form), "" in files without them."""
    lib = native.lib()
    handle = ctypes.c_void_p()
    rc = lib.argus_rb_open(native.fs_path(path), 0, ctypes.byref(handle))
    try:
        if rc < 0:
            raise TraceError(native.rb_error(handle))
        stats = native.RbStats()
        lib.argus_rb_stats(handle, ctypes.byref(stats))
        out = {name: getattr(stats, name) for name, _ in native.RbStats._fields_}
        out["hostname"] = native.hostname_text(stats.hostname)
        out["boot_id"] = native.boot_id_text(stats.boot_id)
        return out
    finally:
        lib.argus_rb_close(handle)


def event_counts(st):
    """{written, present}: events (decoded rows) a buffer took and holds now,
    from buffer_stats alone -- the one count `argus status`, `hangs` and
    `debug` print.  A row per record, two per SWITCH or SYSCALL record
    (schema v3 / v4: extra_rows counts them, ever written).  `present` is
    exact while nothing was overwritten; after a wrap the overwritten
    records are taken to have had the written ones' mix of types."""
    written_records = int(st.get("records_written", 0))
    extra = int(st.get("extra_rows", 0))
    present_records = int(st.get("records_present", 0))
    present = present_records + (extra * present_records // written_records if written_records else 0)
    return {"written": written_records + extra, "present": present}
