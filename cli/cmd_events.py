"""`argus events`: print decoded records, as `perf script` does for perf.

Text: one line per record, `comm tid/pid [cpu] time: type details`; --json:
one JSON object per line with every field of the row that the type uses.
Filtering happens on the numpy rows before any per-record Python work, and
the buffer is streamed window by window (constant memory: a full 2 GiB
buffer decoded at once would take ~9 GB).
"""
import json
import sys

import numpy as np

from argus.cli.common import ArgusError, resolve_buffer
from argus.cli.progress import Progress
from argus.cli.textsafe import safe
from argus.cli.tracefile import NAME_TYPES, load_trace, stream_windows
from argus.graphbuild.threads import decode_comm
from argus.tracer import schema, syscalls


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
    if pids:
        # A wakeup concerns both sides: keep it when either the waker or wakee matches.
        mask &= np.isin(rows["pid"], pids) | (
            np.isin(rows["type"], [schema.WAKEUP, schema.WAKEUP_NEW]) & np.isin(rows["peer_pid"], pids))
    if tids:
        mask &= np.isin(rows["tid"], tids) | (
            np.isin(rows["type"], [schema.WAKEUP, schema.WAKEUP_NEW]) & np.isin(rows["peer_tid"], tids))
    if types:
        codes = []
        for t in types:
            if t not in schema.TYPE_BY_NAME:
                raise ArgusError(f"unknown event type {t!r}; known: {', '.join(schema.TYPE_BY_NAME)}")
            codes.append(schema.TYPE_BY_NAME[t])
        mask &= np.isin(rows["type"], codes)
    return rows[mask]


def describe(row, threads, trace):
    """Type-specific details of one row, for the text format."""
    t = int(row["type"])
    if t == schema.FD_INFO:
        return (f"fd={int(row['aux'])} kind={schema.FD_KIND_NAMES.get(int(row['state']), row['state'])} "
                f"inode={int(row['obj'])} local={int(row['obj2']):#x} peer={int(row['val']) & (2**64 - 1):#x}")
    if t == schema.TIMER:
        return (f"{schema.TIMER_KIND_NAMES.get(int(row['state']), row['state'])} timer={int(row['obj']):#x} "
                f"armed_by={threads.label(int(row['peer_tid']))} armed_at={int(row['obj2'])}")
    if t == schema.CPU_SAMPLE:
        return (f"{'kernel' if row['state'] else 'user'} user_stack={int(row['obj']):#x} "
                f"kernel_stack={int(row['obj2']):#x} period_us={int(row['aux'])}")
    if t in (schema.USER_STACK, schema.KERNEL_STACK):
        frames = " ".join(f"{int(f):#x}" for f in trace.stack_frames(row))
        return f"stack={int(row['obj2']):#x} frames=[{frames}]"
    if t == schema.MAPPING:
        return f"{int(row['obj']):#x}-{int(row['obj2']):#x} pgoff={int(row['val']):#x} {trace.mapping_path(row)}"
    if t == schema.SWITCH_OUT:
        return (f"state={schema.STATE_NAMES.get(int(row['state']), row['state'])} "
                f"wait={schema.WAIT_NAMES.get(int(row['reason']), row['reason'])} "
                f"syscall={syscalls.name(row['nr'])} obj={int(row['obj']):#x}")
    if t == schema.SWITCH_IN:
        return f"prev={threads.label(int(row['peer_tid']))}"
    if t in (schema.WAKEUP, schema.WAKEUP_NEW):
        ctx = schema.WAKE_CONTEXT_NAMES.get(int(row["reason"]), row["reason"])
        irq = schema.IRQ_NAMES.get(int(row["irq"]), row["irq"])
        extra = f" irq={irq}" if int(row["irq"]) else ""
        return f"wakee={threads.label(int(row['peer_tid']))} ctx={ctx}{extra} target_cpu={int(row['obj'])}"
    if t == schema.SYSCALL_ENTER:
        name = syscalls.name(row["nr"])
        if name == "futex":
            return f"futex uaddr={int(row['obj']):#x} op={syscalls.futex_op_name(row['aux'])}"
        return f"{name} obj={int(row['obj'])} aux={int(row['aux'])}"
    if t == schema.SYSCALL_EXIT:
        return f"{syscalls.name(row['nr'])} = {int(row['val'])}"
    if t == schema.FORK:
        return f"child={int(row['peer_tid'])}/{int(row['peer_pid'])} comm={_comm(row)}"
    if t in (schema.EXEC, schema.THREAD_NAME):
        return f"comm={_comm(row)}"
    if t == schema.EXIT:
        return f"code={int(row['val'])}{' (process)' if row['state'] else ''}"
    if t == schema.PROC_SNAPSHOT:
        return f"ppid={int(row['peer_pid'])} comm={_comm(row)}{' main' if row['state'] else ''}"
    if t in (schema.DATA_FLAG_WRITE, schema.DATA_FLAG_READ):
        return f"addr={int(row['obj']):#x} value={int(row['val'])} pc={int(row['obj2']):#x}"
    if t == schema.LOST:
        return f"count={int(row['val'])}"
    if t == schema.WAIT_SITE:
        fds = " ".join(f"{fd}:{ev:#x}" for fd, ev in _wait_fds(row, trace))
        return (f"{syscalls.name(row['nr'])} timeout_ms={int(row['aux'])} nfds={int(row['peer_pid'])} "
                f"fds=[{fds}] site={int(row['obj2']):#x}")
    if t == schema.FUTEX_STATE:
        pi = bool(int(row["state"]) & schema.FUTEX_PI)
        owner = int(row["val"]) & schema.FUTEX_TID_MASK if pi else int(row["peer_tid"])
        return (f"uaddr={int(row['obj']):#x} op={syscalls.futex_op_name(row['nr'])} word={int(row['val']):#x} "
                f"owner={owner}{' (pi)' if pi else ' (owner field)'}")
    if t == schema.FILE_LOCK:
        d = _file_lock(row)
        holder = f" holder={d['holder_pid']} ({d['holder_type']})" if d["holder_pid"] else ""
        return (f"{d['kind']} {d['lock_type']}{' wait' if d['wait'] else ''} fd={d['fd']} inode={d['inode']} "
                f"start={d['start']} len={d['len']}{holder}")
    return ""


def _wait_fds(row, trace):
    """[(fd, events)] of a WAIT_SITE row (decoder side array: fd | events << 32)."""
    lo, n = int(row["obj"]), int(row["peer_tid"])
    ent = trace.frames[lo:lo + n] if lo + n <= len(trace.frames) else []
    return [(int(np.int32(np.uint32(int(e) & 0xFFFFFFFF))), int(e) >> 32) for e in ent]


def _file_lock(row):
    return {"fd": int(row["aux"]), "kind": schema.LOCK_KIND_NAMES.get(int(row["state"]), str(int(row["state"]))),
            "lock_type": schema.LOCK_TYPE_NAMES.get(int(row["reason"]), str(int(row["reason"]))),
            "wait": bool(row["peer_tid"]), "whence": int(row["nr"]), "start": int(row["val"]), "len": int(row["obj2"]),
            "inode": int(row["obj"]), "holder_pid": int(row["peer_pid"]),
            "holder_type": schema.LOCK_TYPE_NAMES.get(int(row["irq"]), "unknown")}


def _comm(row):
    return decode_comm(bytes(row["comm"]))


def row_to_json(row, threads, trace):
    t = int(row["type"])
    out = {
        "ts_ns": int(row["ts_ns"]), "cpu": int(row["cpu"]), "pid": int(row["pid"]),
        "tid": int(row["tid"]), "comm": threads.comm(int(row["tid"])),
        "type": schema.TYPE_NAMES.get(t, str(t)),
    }
    if t == schema.SWITCH_OUT:
        out.update(state=schema.STATE_NAMES.get(int(row["state"])), wait_reason=schema.WAIT_NAMES.get(int(row["reason"])),
                   syscall=syscalls.name(row["nr"]), wait_obj=int(row["obj"]))
    elif t == schema.SWITCH_IN:
        out.update(prev_pid=int(row["peer_pid"]), prev_tid=int(row["peer_tid"]))
    elif t in (schema.WAKEUP, schema.WAKEUP_NEW):
        out.update(wakee_pid=int(row["peer_pid"]), wakee_tid=int(row["peer_tid"]),
                   context=schema.WAKE_CONTEXT_NAMES.get(int(row["reason"])),
                   irq_kind=schema.IRQ_NAMES.get(int(row["irq"])), irq_vec=int(row["aux"]), target_cpu=int(row["obj"]))
    elif t == schema.SYSCALL_ENTER:
        out.update(syscall=syscalls.name(row["nr"]), nr=int(row["nr"]), aux=int(row["aux"]),
                   obj=int(row["obj"]), obj2=int(row["obj2"]))
    elif t == schema.SYSCALL_EXIT:
        out.update(syscall=syscalls.name(row["nr"]), nr=int(row["nr"]), ret=int(row["val"]))
    elif t == schema.FORK:
        out.update(child_pid=int(row["peer_pid"]), child_tid=int(row["peer_tid"]), child_comm=_comm(row))
    elif t in (schema.EXEC, schema.THREAD_NAME):
        out.update(new_comm=_comm(row))
    elif t == schema.EXIT:
        out.update(exit_code=int(row["val"]), group_leader=bool(row["state"]))
    elif t == schema.PROC_SNAPSHOT:
        out.update(ppid=int(row["peer_pid"]), main_thread=bool(row["state"]), snapshot_comm=_comm(row))
    elif t in (schema.DATA_FLAG_WRITE, schema.DATA_FLAG_READ):
        out.update(addr=int(row["obj"]), value=int(row["val"]), pc=int(row["obj2"]))
    elif t == schema.LOST:
        out.update(count=int(row["val"]))
    elif t == schema.FD_INFO:
        out.update(fd=int(row["aux"]), kind=schema.FD_KIND_NAMES.get(int(row["state"])), family=int(row["reason"]),
                   sock_type=int(row["nr"]), inode=int(row["obj"]), local=int(row["obj2"]),
                   peer=int(row["val"]) & (2**64 - 1))
    elif t == schema.TIMER:
        out.update(kind=schema.TIMER_KIND_NAMES.get(int(row["state"])), timer_id=int(row["obj"]),
                   expires_ns=int(row["val"]), arm_ts_ns=int(row["obj2"]),
                   arm_pid=int(row["peer_pid"]), arm_tid=int(row["peer_tid"]))
    elif t == schema.CPU_SAMPLE:
        out.update(user_stack_id=int(row["obj"]), kernel_stack_id=int(row["obj2"]), period_us=int(row["aux"]),
                   in_kernel=bool(row["state"]))
    elif t in (schema.USER_STACK, schema.KERNEL_STACK):
        out.update(stack_id=int(row["obj2"]), frames=[int(f) for f in trace.stack_frames(row)])
    elif t == schema.MAPPING:
        out.update(start=int(row["obj"]), end=int(row["obj2"]), pgoff=int(row["val"]), prot=int(row["aux"]),
                   path=trace.mapping_path(row))
    elif t == schema.WAIT_SITE:
        out.update(syscall=syscalls.name(row["nr"]), nr=int(row["nr"]), timeout_ms=int(row["aux"]),
                   nfds=int(row["peer_pid"]), site_id=int(row["obj2"]),
                   fds=[{"fd": fd, "events": ev} for fd, ev in _wait_fds(row, trace)])
    elif t == schema.FUTEX_STATE:
        out.update(uaddr=int(row["obj"]), op=int(row["nr"]), word=int(row["val"]), owner_field=int(row["peer_tid"]),
                   pi=bool(int(row["state"]) & schema.FUTEX_PI))
    elif t == schema.FILE_LOCK:
        out.update(_file_lock(row))
    return out


def _write_rows(out, rows, threads, trace, base, as_json):
    for row in rows:
        if as_json:
            out.write(json.dumps(row_to_json(row, threads, trace)) + "\n")
        else:
            tid = int(row["tid"])
            ts = (int(row["ts_ns"]) - base) / 1e9
            name = schema.TYPE_NAMES.get(int(row["type"]), str(int(row["type"])))
            out.write(safe(f"{threads.comm(tid):>16} {tid:>7}/{int(row['pid']):<7} [{int(row['cpu']):03d}] "
                           f"{ts:12.6f}: {name:<14} {describe(row, threads, trace)}") + "\n")


def run(args, chunks_per_window=None):
    """Streams: one pass for the thread names (the records that carry one),
    then the buffer window by window (tracer/python/stream.py), filtering each
    window's rows before any per-record work; memory stays that of one window
    whatever the buffer's size, and the output is the whole-buffer decode's."""
    from argus.tracer import stream

    path = resolve_buffer(args.buffer)
    for t in args.type or ():
        if t not in schema.TYPE_BY_NAME:
            raise ArgusError(f"unknown event type {t!r}; known: {', '.join(schema.TYPE_BY_NAME)}")
    names, threads = load_trace(path, types=NAME_TYPES, rows_hint=4096)
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
            _write_rows(out, rows, threads, trace, base, args.json)
            if left == 0:
                break
        out.flush()
        progress.finished("decoded", decoded)
    return 0
