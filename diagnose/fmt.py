"""Formatting durations, shares and trace times: the bottom of diagnose's
prose, imported by report.py (which re-exports these names) and by every
renderer beside it (profile, whatif, compare, hangs, exports) without
importing report.py itself, so no renderer and report import each other.
"""
import time


# --- formatting helpers ---
def fmt_dur(ns):
    """A duration with a unit picked after rounding (never "1000.0 ms")."""
    ns = int(ns)
    a = abs(ns)
    if a < 1_000:
        return f"{ns} ns"
    if round(a / 1e3) < 1000:
        return f"{ns / 1e3:.0f} us"
    if round(a / 1e6, 1) < 1000:
        return f"{ns / 1e6:.1f} ms"
    return f"{ns / 1e9:.3f} s"


def fmt_rel(ns):
    ns = int(ns)
    return ("+" if ns >= 0 else "-") + fmt_dur(abs(ns))


def fmt_pct(x):
    return f"{x * 100:.0f}%"


# --- the one time origin ---
# Every absolute time Argus prints is seconds since the buffer's first
# timestamp (`argus debug --at` takes the same), followed by the wall-clock
# time when the trace knows it: the file header's created_realtime_ns -
# created_ns is the CLOCK_REALTIME - CLOCK_MONOTONIC offset at creation
# (docs/ring-buffer.md).  Relative times ("+1.5 s") are relative to the hang.
def trace_clock(g):
    """(origin_ns, wall_offset_ns or None) of a graph: diagnose/windowed.py sets
    g.time_origin (a windowed load keeps the buffer's start) and g.wall_offset_ns."""
    return int(g.time_origin or g.trace_start), g.wall_offset_ns


def fmt_wall(ts, wall_offset):
    t = (int(ts) + int(wall_offset)) / 1e9
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)) + f".{int(t * 1000) % 1000:03d}"


def fmt_at(ts, origin, wall_offset=None):
    """'12.345 s' since the origin, with ' (2026-11-23 19:41:02.123)' when the wall clock is known."""
    txt = f"{(int(ts) - int(origin)) / 1e9:.3f} s"
    return txt + (f" ({fmt_wall(ts, wall_offset)})" if wall_offset is not None else "")


def fmt_trace_time(g, ts):
    return fmt_at(ts, *trace_clock(g))
