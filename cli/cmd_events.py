"""`argus events`: print decoded records, as `perf script` does for perf.

Text: one line per record, `comm tid/pid [cpu] time: type details` (cpu
`-` for the records of user-space rings, which have none: 0xffff in
--json); --json: one JSON object per line with every field of the row that
the type uses.  A probe record's `fn` is symbolized through its process's
mappings (`fn=0xaddr <name>` in text, `fn_symbol` in JSON).
Both read rows through the schema's per-type field map (schema.ROW_FIELDS),
never by column.
Filtering happens on the numpy rows before any per-record Python work, and
the buffer is streamed window by window (constant memory: a full 2 GiB
buffer decoded at once would take ~9 GB).
"""
import json
import sys

import numpy as np

from argus.cli.common import ArgusError, resolve_buffer
from argus.cli.progress import Progress
from argus.tracer.textsafe import safe
from argus.cli.tracefile import NAME_TYPES, load_trace, stream_windows
from argus.graphbuild.threads import decode_comm
from argus.tracer import containers, input_event, netio, schema, syscalls
from argus.graphbuild.stacks import Symbolizer
from argus.tracer import stream

NO_CPU = 0xFFFF      # a record written to a user-space ring (a probe), not by the kernel


def register(sub):
    p = sub.add_parser("events", help="print the recorded events (like perf script)")
    p.add_argument("--buffer", metavar="FILE", help="ring buffer file (default: the active one)")
    p.add_argument("--pid", type=int, action="append", help="only this process (repeatable)")
    p.add_argument("--tid", type=int, action="append", help="only this thread (repeatable)")
    p.add_argument("--type", action="append", metavar="TYPE",
                   help="only this event type (repeatable): " + ", ".join(schema.TYPE_BY_NAME))
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--limit", type=int, default=0, help="print at most N records")
    p.set_defaults(func=run)


def select_rows(rows, pids=None, tids=None, types=None):
    mask = np.ones(len(rows), dtype=bool)
    is_wakeup = np.isin(rows["type"], [schema.WAKEUP, schema.WAKEUP_NEW])
    if pids:
        # A wakeup concerns both sides: keep it when either the waker or wakee matches.
        mask &= np.isin(rows["pid"], pids) | (
            is_wakeup & np.isin(rows[schema.column(schema.WAKEUP, "wakee_pid")], pids))
    if tids:
        mask &= np.isin(rows["tid"], tids) | (
            is_wakeup & np.isin(rows[schema.column(schema.WAKEUP, "wakee_tid")], tids))
    if types:
        codes = []
        for t in types:
            if t not in schema.TYPE_BY_NAME:
                raise ArgusError(f"unknown event type {t!r}; known: {', '.join(schema.TYPE_BY_NAME)}")
            codes.append(schema.TYPE_BY_NAME[t])
        mask &= np.isin(rows["type"], codes)
    return rows[mask]


def _shower(f):
    """value -> as shown, for one field (shown()'s per-field step)."""
    if f.ctype == "comm":
        return decode_comm
    return f.display


# type -> ((name, show), ...) of the fields shown (not side-array indexes)
_SHOWN = {t: tuple((f.name, _shower(f)) for f in fields if f.ctype != "side")
          for t, fields in schema.ROW_FIELDS.items()}


def shown(row):
    """{field name: value as shown} of one row, from the schema's per-type
    field map (schema.ROW_FIELDS): enum names, bools, decoded comms; ints as
    the record's C type has them.  Side-array indexes are left out."""
    values = schema.row_values(row)
    return {name: show(values[name]) for name, show in _SHOWN.get(int(row["type"]), ())}


class FnNames:
    """The function names of probe records' `fn` addresses, through the
    processes' MAPPING records (graphbuild.stacks.Symbolizer: ELF program
    headers and addr2line), each (pid, fn) symbolized once, a window's at a
    time in one batch."""

    def __init__(self, maps):
        self._sym = Symbolizer(maps)
        self._names = {}

    FN = {schema.column(t, "fn") for t in schema.PROBE_TYPES}
    assert len(FN) == 1, "every probe record keeps fn in one column"
    FN = FN.pop()

    def learn(self, rows):
        probes = rows[np.isin(rows["type"], list(schema.PROBE_TYPES))]
        pairs = np.unique(np.stack([probes["pid"].astype(np.uint64), probes[self.FN].astype(np.uint64)], axis=1),
                          axis=0) if len(probes) else ()
        keys = sorted({(int(p), int(f)) for p, f in pairs} - self._names.keys())
        if keys:
            names = self._sym.symbolize([k[0] for k in keys], [k[1] for k in keys])
            self._names.update({k: (n if n != f"{k[1]:#x}" else None) for k, n in zip(keys, names)})

    def name(self, pid, fn):
        return self._names.get((int(pid), int(fn)))


def _fn_text(row, d, fns):
    name = fns.name(row["pid"], d["fn"]) if fns is not None else None
    return f"fn={d['fn']:#x}" + (f" <{name}>" if name else "")


def describe(row, threads, trace, fns=None):
    """Type-specific details of one row: the one per-record formatter, for
    `argus events` and the REPL's `events`.  threads: .label(tid) (a
    ThreadNames); trace: anything with the decoder's side arrays .frames
    and .strings (a reader.Trace, an EventGraph); fns: FnNames or None."""
    t = int(row["type"])
    d = shown(row)
    if t == schema.FD_INFO:
        return f"fd={d['fd']} kind={d['kind']} inode={d['inode']} local={d['local']:#x} peer={d['peer']:#x}"
    if t == schema.TIMER:
        return (f"{d['kind']} timer={d['timer_id']:#x} armed_by={threads.label(d['arm_tid'])} "
                f"armed_at={d['arm_ts_ns']}")
    if t == schema.CPU_SAMPLE:
        return (f"{'kernel' if d['in_kernel'] else 'user'} user_stack={d['user_stack_id']:#x} "
                f"kernel_stack={d['kernel_stack_id']:#x} period_us={d['period_us']}")
    if t in (schema.USER_STACK, schema.KERNEL_STACK):
        frames = " ".join(f"{int(f):#x}" for f in schema.stack_frames(row, trace.frames))
        return f"stack={d['stack_id']:#x} frames=[{frames}]"
    if t == schema.MAPPING:
        return f"{d['start']:#x}-{d['end']:#x} pgoff={d['pgoff']:#x} {schema.mapping_path(row, trace.strings)}"
    if t == schema.PROC_NS:
        path = schema.proc_ns_path(row, trace.strings)
        name = containers.container_name(path)
        return (f"cgroup={path or '?'} cgroup_id={d['cgroup_id']} netns={d['netns_ino']}"
                + (f" container={name}" if name else ""))
    if t == schema.GO_SNAPSHOT:
        return (f"goroutine {d['goid']} g={d['g']:#x} parked: {schema.go_snapshot_wait(row, trace.strings)}"
                + (f" chan={d['wait_obj']:#x}" if d["wait_obj"] else "")
                + (" (timer)" if d["flags"] & schema.GO_SNAP_TIMER else "")
                + (" locked" if d["flags"] & schema.GO_SNAP_LOCKED else ""))
    if t == schema.SWITCH_OUT:
        return (f"state={d['state']} wait={d['wait_reason']} syscall={syscalls.name(d['syscall_nr'])} "
                f"obj={d['wait_obj']:#x}")
    if t == schema.SWITCH_IN:
        return f"prev={threads.label(d['prev_tid'])}"
    if t in (schema.WAKEUP, schema.WAKEUP_NEW):
        extra = f" irq={d['irq_kind']}" if d["irq_kind"] != schema.IRQ_NAMES[schema.IRQ_NONE] else ""
        return f"wakee={threads.label(d['wakee_tid'])} ctx={d['context']}{extra} target_cpu={d['target_cpu']}"
    if t == schema.SYSCALL_ENTER:
        name = syscalls.name(d["nr"])
        if name == "futex":
            return f"futex uaddr={d['obj']:#x} op={schema.futex_op_name(d['aux'])}"
        return f"{name} obj={d['obj']} aux={d['aux']}"
    if t == schema.SYSCALL_EXIT:
        return f"{syscalls.name(d['nr'])} = {d['ret']}"
    if t == schema.FORK:
        return f"child={d['child_tid']}/{d['child_pid']} comm={d['comm']}"
    if t in (schema.EXEC, schema.THREAD_NAME):
        return f"comm={d['comm']}"
    if t == schema.EXIT:
        return f"code={d['exit_code']}{' (process)' if d['is_group_leader'] else ''}"
    if t == schema.PROC_SNAPSHOT:
        return f"ppid={d['ppid']} comm={d['comm']}{' main' if d['is_main_thread'] else ''}"
    if t in (schema.DATA_FLAG_WRITE, schema.DATA_FLAG_READ):
        return f"addr={d['addr']:#x} value={d['value']} pc={d['pc']:#x}"
    if t == schema.LOST:
        return f"count={d['count']} kind={d['kind']}"
    if t == schema.DETAIL:     # the recording tier from here on (docs/linux-tracer.md, "Detail tiers")
        why = f" cause={threads.label(d['cause_tid'])} out_ms={d['out_ns'] / 1e6:.0f}" if d["cause_tid"] else ""
        return f"tier={d['tier']} mode={d['mode']}{why}"
    if t == schema.WAIT_SITE:
        fds = " ".join(f"{fd}:{ev:#x}" for fd, ev in schema.wait_site_fds(row, trace.frames))
        return (f"{syscalls.name(d['syscall_nr'])} timeout_ms={d['timeout_ms']} nfds={d['nfds']} "
                f"fds=[{fds}] site={d['site_id']:#x}")
    if t == schema.FUTEX_STATE:
        pi = bool(d["flags"] & schema.FUTEX_PI)
        owner = d["word"] & schema.FUTEX_TID_MASK if pi else d["owner_field"]
        how = " (pi)" if pi else " (joins: its exit clears the word)" if d["flags"] & schema.FUTEX_THREAD_EXIT \
            else " (owner field)"
        return (f"uaddr={d['uaddr']:#x} op={schema.futex_op_name(d['op'])} word={d['word']:#x} "
                f"owner={owner}{how}")
    if t == schema.INPUT:
        return f"{input_event.describe(d['obj'])} {_fn_text(row, d, fns)} probe={d['probe_id']}"
    if t in schema.PROBE_TYPES:
        return f"obj={d['obj']:#x} {_fn_text(row, d, fns)} probe={d['probe_id']}"
    if t in schema.GO_TYPES:     # obj: the goroutine; fn: the g register at the probe (g0 on the scheduler)
        return f"goroutine g={d['obj']:#x} (g register {d['fn']:#x})"
    if t == schema.NET_IO:
        ends = "? -> ? (no full record of the socket in the window)"
        if netio.tuple_known(row):
            (la, lp), (ra, rp) = netio.endpoints(row, trace.frames)
            ends = f"{_hostport(la, lp)} -> {_hostport(ra, rp)}"
        seq = f" seq={d['seq']}" if d["proto"] == "tcp" else ""
        return f"{d['dir']} {d['proto']} fd={d['fd']} {ends} bytes={d['bytes']}{seq}"
    if t == schema.FILE_LOCK:
        holder = f" holder={d['holder_pid']} ({d['holder_type']})" if d["holder_pid"] else ""
        return (f"{d['kind']} {d['type']}{' wait' if d['wait'] else ''} fd={d['fd']} inode={d['inode']} "
                f"start={d['start']} len={d['len']}{holder}")
    return ""


def _hostport(ip, port):
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def row_to_json(row, threads, trace, fns=None):
    """The header, every field of the type's map under its JSON key (a
    syscall number also by name), the side arrays' contents, and a probe's
    fn_symbol (None when unknown)."""
    t = int(row["type"])
    out = {
        "ts_ns": int(row["ts_ns"]), "cpu": int(row["cpu"]), "pid": int(row["pid"]),
        "tid": int(row["tid"]), "comm": threads.comm(int(row["tid"])),
        "type": schema.TYPE_NAMES.get(t, str(t)),
    }
    d = shown(row)
    for f in schema.ROW_FIELDS.get(t, ()):
        if f.ctype == "side":
            continue
        if (f.key or f.name) == "nr":
            out["syscall"] = syscalls.name(d[f.name])
        out[f.key or f.name] = d[f.name]
    if t in (schema.USER_STACK, schema.KERNEL_STACK):
        out["frames"] = [int(f) for f in trace.stack_frames(row)]
    elif t == schema.MAPPING:
        out["path"] = trace.mapping_path(row)
    elif t == schema.PROC_NS:
        out["cgroup"] = schema.proc_ns_path(row, trace.strings)
        out["container"] = containers.container_name(out["cgroup"])
    elif t == schema.GO_SNAPSHOT:
        out["wait"] = schema.go_snapshot_wait(row, trace.strings)
        out["locked"] = bool(d["flags"] & schema.GO_SNAP_LOCKED)
        out["timer"] = bool(d["flags"] & schema.GO_SNAP_TIMER)
    elif t == schema.WAIT_SITE:
        out["fds"] = [{"fd": fd, "events": ev} for fd, ev in schema.wait_site_fds(row, trace.frames)]
    elif t == schema.NET_IO:
        out["local_addr"] = out["remote_addr"] = None      # unknown: the socket's full record is not in the window
        if netio.tuple_known(row):
            (out["local_addr"], _), (out["remote_addr"], _) = netio.endpoints(row, trace.frames)
    elif t == schema.FUTEX_STATE:
        out["pi"] = bool(d["flags"] & schema.FUTEX_PI)
        out["join"] = bool(d["flags"] & schema.FUTEX_THREAD_EXIT)
    elif t == schema.INPUT:
        out.update(input_event.fields(d["obj"]))     # kind, detail, x_time_ms, synthetic
    if t in schema.PROBE_TYPES and fns is not None:
        out["fn_symbol"] = fns.name(row["pid"], d["fn"])
    return out


def _as_dicts(rows, batch=1 << 16):
    """The rows as {column: value} dicts, a batch at a time: a dict lookup is
    several times cheaper than a numpy record's field access, and a buffer's
    millions of rows are each read a dozen times here."""
    names = rows.dtype.names
    for lo in range(0, len(rows), batch):
        for values in rows[lo:lo + batch].tolist():
            yield dict(zip(names, values))


def _cpu_text(cpu):
    return "  -" if cpu == NO_CPU else f"{cpu:03d}"


def _write_rows(out, rows, threads, trace, base, as_json, fns=None):
    if fns is not None:
        fns.learn(rows)
    for row in _as_dicts(rows):
        if as_json:
            out.write(json.dumps(row_to_json(row, threads, trace, fns)) + "\n")
        else:
            tid = int(row["tid"])
            ts = (int(row["ts_ns"]) - base) / 1e9
            name = schema.TYPE_NAMES.get(int(row["type"]), str(int(row["type"])))
            out.write(safe(f"{threads.comm(tid):>16} {tid:>7}/{int(row['pid']):<7} [{_cpu_text(int(row['cpu']))}] "
                           f"{ts:12.6f}: {name:<14} {describe(row, threads, trace, fns)}") + "\n")


def run(args, chunks_per_window=None):
    """Streams: one pass for the thread names (the records that carry one),
    then the buffer window by window (tracer/stream.py), filtering each
    window's rows before any per-record work; memory stays that of one window
    whatever the buffer's size, and the output is the whole-buffer decode's."""
    path = resolve_buffer(args.buffer)
    for t in args.type or ():
        if t not in schema.TYPE_BY_NAME:
            raise ArgusError(f"unknown event type {t!r}; known: {', '.join(schema.TYPE_BY_NAME)}")
    names, threads = load_trace(path, types=NAME_TYPES + (schema.MAPPING,), rows_hint=4096)
    fns = FnNames(names)
    base = int(names.seen_first_ts or 0)
    left = args.limit if args.limit > 0 else None
    out = sys.stdout
    # stderr only: the summary with the rate when it took > 1 s; no live status
    # line, since the records stream to the same terminal as it runs
    with Progress() as progress:
        decoded = 0
        for trace in stream_windows(path, chunks_per_window or stream.CHUNKS_PER_WINDOW):
            decoded += trace.nrows
            rows = select_rows(trace.rows, args.pid, args.tid, args.type)
            if left is not None:
                rows = rows[:left]
                left -= len(rows)
            _write_rows(out, rows, threads, trace, base, args.json, fns)
            if left == 0:
                break
        out.flush()
        progress.finished("decoded", decoded)
    return 0
