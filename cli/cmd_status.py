"""`argus status`: is tracing live, how fast, how full, what was lost.

Live numbers come from the daemon (events/s over its last few seconds); when
no daemon runs, the buffer's own header still says what it holds.  Either
way the header says the history the buffer holds (history_s) and whether the
disk is full (disk_full, disk_full_since: the ring then goes on in the chunks
it has, docs/linux-tracer.md).

`lost` is what the tracer dropped (a full kernel buffer, a staging
overflow); `switches_unreported` the sched_switches the kernel itself never
reported (no tracepoint ran: a hole, but not Argus's loss; both in
docs/linux-tracer.md, "Lost records").
"""
import json
import os

from argus.cli import control
from argus.cli.common import ArgusError, resolve_buffer
from argus.tracer.textsafe import safe
from argus.tracer import reader


def register(sub):
    p = sub.add_parser("status", help="tracing state: events/s, bytes/event, fill, lost, unreported switches, "
                                      "overwritten")
    p.add_argument("--buffer", metavar="FILE", help="describe this buffer when no daemon runs")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def fmt_bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024.0


def run(args):
    live = control.status()
    if live is not None:
        info = dict(live, tracing=True)
    else:
        path = resolve_buffer(args.buffer)
        if not os.path.exists(path):
            raise ArgusError(f"not tracing, and no buffer at {path}")
        try:
            st = reader.buffer_stats(path)
        except reader.TraceError as e:
            raise ArgusError(str(e))
        # events are decoded rows, counted as `hangs` and `debug` count them (reader.event_counts)
        counts = reader.event_counts(st)
        events = counts["written"]
        info = {
            "tracing": False, "buffer": path, "events": events,
            "bytes": st.get("bytes_written", 0),
            "bytes_per_event": (st.get("bytes_written", 0) / events) if events else 0.0,
            "fill": (st.get("chunks_in_use", 0) / st["nchunks"]) if st.get("nchunks") else 0.0,
            "lost": st.get("records_lost", 0), "switches_unreported": st.get("switches_unreported", 0),
            "overwritten": st.get("records_overwritten", 0),
            "present": st.get("records_present", 0), "events_present": counts["present"],
        }
    if not info["tracing"]:
        info.update(_dropped(info.get("buffer")))   # live: chunks are taken while read, and polls must stay cheap
    info.update(_history(info.get("buffer")))
    if args.json:
        print(json.dumps(info))
        return 0
    print("\n".join(format_text(info)))
    return 0


def format_text(info):
    """The lines `argus status` prints for info (the --json dict)."""
    lines = []
    state = f"tracing (daemon pid {info.get('pid')})" if info["tracing"] else "not tracing"
    lines.append(f"state:          {state}")
    lines.append(f"buffer:         {safe(info.get('buffer'))}")
    if info.get("hostname") or info.get("boot_id"):
        lines.append(f"host:           {safe(info.get('hostname') or '?')} (boot {info.get('boot_id') or '?'})")
    if info.get("scope_cgroup") or info.get("scope_netns"):
        lines.append("scope:          only " + " and ".join(
            x for x in (f"cgroup {safe(info['scope_cgroup'])}" if info.get("scope_cgroup") else "",
                        f"netns {info['scope_netns']}" if info.get("scope_netns") else "") if x))
    if info["tracing"]:
        lines.append(f"events/s:       {info.get('events_per_s', 0):,.0f}")
        lines.append(f"uptime:         {info.get('uptime_s', 0):,.1f} s")
        probes = info.get("syscall_probes")
        if probes == "fentry":
            lines.append(f"syscalls:       fentry/fexit on {info.get('syscall_functions', 0)} kernel functions")
        elif probes == "tracepoint":
            lines.append("syscalls:       raw_syscalls tracepoints (every syscall on the machine pays)")
        elif probes:
            lines.append(f"syscalls:       {safe(probes)}")
        if info.get("hang_detector"):
            lines.append(f"hang detector:  {info.get('watched_loops', 0):,} event loops watched, "
                         f"{info.get('hangs_detected', 0):,} hangs, {info.get('snapshots_written', 0):,} snapshots "
                         "(argus hangs --recorded)")
    lines.append(f"events:         {info.get('events', 0):,}")
    if "events_present" in info:
        lines.append(f"events present: {info['events_present']:,} (the count `argus hangs` and `debug` give)")
    lines.append(f"bytes/event:    {info.get('bytes_per_event', 0):.1f}")
    lines.append(f"recorded:       {fmt_bytes(info.get('bytes', 0))}")
    lines.append(f"fill:           {100.0 * info.get('fill', 0):.1f} %")
    if "history_s" in info:
        lines.append(f"history:        {info['history_s']:,.1f} s in the buffer")
    if info.get("disk_full"):
        lines.append(f"disk full:      since {safe(info.get('disk_full_since', '?'))} (ENOSPC): the ring goes on "
                     f"in the chunks it has, {info.get('history_s', 0):,.1f} s of history; free disk space to grow it")
    lines.append(f"lost:           {info.get('lost', 0):,} (records the tracer dropped)")
    if "switches_unreported" in info:   # not from a daemon older than the count
        lines.append(f"unreported:     {info['switches_unreported']:,} switches the kernel never reported "
                     "(holes in its tracing, not drops)")
    lines.append(f"overwritten:    {info.get('overwritten', 0):,}")
    if "torn_chunks" in info:
        lines.append(f"torn chunks:    {info['torn_chunks']:,}")
        lines.append(f"bad records:    {info['bad_records']:,}")
    return lines


def _history(path):
    """From the buffer's header, whoever writes it: {history_s: the time its
    readable records span, disk_full, and when full, disk_full_since (local
    time) and disk_full_since_ns (CLOCK_REALTIME)}; {} when it cannot be read."""
    import time

    if not path or not os.access(path, os.R_OK):
        return {}
    try:
        st = reader.buffer_stats(path)
    except reader.TraceError:
        return {}
    first, last, since = st.get("first_ts", 0), st.get("last_ts", 0), st.get("disk_full_since_ns", 0)
    out = {"history_s": round((last - first) / 1e9, 3) if last > first else 0.0, "disk_full": bool(since),
           "hostname": st.get("hostname", ""), "boot_id": st.get("boot_id", "")}
    if since:
        out["disk_full_since_ns"] = since
        out["disk_full_since"] = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(since / 1e9))
    return out


def _dropped(path):
    """{torn_chunks, bad_records}: what a reader of the buffer drops now (a
    validation pass over every record, no rows kept: ~1 s per GiB), or {}
    when the buffer cannot be read."""
    if not path or not os.access(path, os.R_OK):
        return {}
    try:
        t = reader.decode_file(path, strict=False, types=(), rows_hint=1)
    except reader.TraceError:
        return {}
    return {"torn_chunks": int(t.torn_chunks), "bad_records": int(t.bad_records)}
