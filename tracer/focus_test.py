"""Focused window decode (focus.py) on the checked-in golden trace: every
row of a kept process is there, in the whole decode's order, and the other
processes' activity is not."""
import pathlib

import numpy as np

from argus.tracer import focus, reader, schema
GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "golden.argus"


def without_side_offsets(rows):
    rows = rows.copy()
    for t, col in ((schema.USER_STACK, "obj"), (schema.KERNEL_STACK, "obj"), (schema.WAIT_SITE, "obj"),
                   (schema.MAPPING, "peer_tid")):
        rows[col][rows["type"] == t] = 0
    return rows


def side_contents(trace):
    return [tuple(int(f) for f in trace.stack_frames(r)) if r["type"] == schema.USER_STACK else trace.mapping_path(r)
            for r in trace.rows if r["type"] in (schema.USER_STACK, schema.MAPPING)]


def busiest_waker(rows):
    w = rows[(rows["type"] == schema.WAKEUP) & (rows["reason"] == schema.WAKE_TASK) & (rows["pid"] != rows["peer_pid"])]
    pids, n = np.unique(w["peer_pid"], return_counts=True)
    return int(pids[np.argmax(n)])


def test_focused_window_keeps_the_kept_processes_rows_whole():
    whole = reader.decode_file(GOLDEN, strict=False)
    lo, hi = int(whole.first_ts), int(whole.last_ts)
    since, until = lo + (hi - lo) // 4, hi - (hi - lo) // 4
    one = reader.decode_file(GOLDEN, strict=False, since_ns=since, until_ns=until)
    pid = busiest_waker(one.rows)
    got = focus.decode_focused(str(GOLDEN), pid, since, until)
    assert pid in got.focus and 1 < len(got.focus) < len(np.unique(one.rows["pid"]))
    activity = np.isin(one.rows["type"], list(focus._ACTIVITY))
    want = one.rows[~activity | np.isin(one.rows["pid"], list(got.focus))
                    | (np.isin(one.rows["type"], focus._WAKEUPS) & np.isin(one.rows["peer_pid"], list(got.focus)))]
    assert got.nrows == len(want) < one.nrows
    assert without_side_offsets(got.rows).tobytes() == without_side_offsets(want).tobytes()
    assert got.first_window_ts == one.first_window_ts
    # stacks and paths read through the rebased offsets are the whole decode's
    sel = np.isin(one.rows["type"], (schema.USER_STACK, schema.MAPPING))
    one_sides = dict(zip(map(bytes, without_side_offsets(one.rows[sel])), side_contents(one)))
    got_sel = np.isin(got.rows["type"], (schema.USER_STACK, schema.MAPPING))
    assert [one_sides[bytes(r)] for r in without_side_offsets(got.rows[got_sel])] == side_contents(got)


def test_kernel_threads_and_interrupts_do_not_join_everyone():
    rows = schema.empty_rows(4)
    rows["type"] = [schema.WAKEUP, schema.WAKEUP, schema.WAKEUP, schema.PROC_SNAPSHOT]
    rows["pid"] = [10, 300, 11, 300]
    rows["peer_pid"] = [11, 10, 12, 2]          # 300 is a kthread (ppid 2) that woke 10
    rows["reason"] = [schema.WAKE_TASK, schema.WAKE_TASK, schema.WAKE_HARDIRQ, 0]
    assert focus.kept_pids(rows, 10) == {10, 11, 300}      # 12: an interrupt's wakeup, not 11's doing


def test_row_cap_drops_the_farthest_processes_first_and_says_so():
    whole = reader.decode_file(GOLDEN, strict=False)
    lo, hi = int(whole.first_ts), int(whole.last_ts)
    one = reader.decode_file(GOLDEN, strict=False, since_ns=lo, until_ns=hi)
    pid = busiest_waker(one.rows)
    full = focus.decode_focused(str(GOLDEN), pid, lo, hi)
    assert full.focus_note == ""
    near = focus.kept_pids(one.rows, pid)
    capped = focus.decode_focused(str(GOLDEN), pid, lo, hi, max_rows=full.nrows - 1)
    # fewer processes, the hung one always, and each kept process's rows whole (the uncapped set's rows of them)
    assert pid in capped.focus and capped.focus < full.focus <= near
    assert capped.nrows <= full.nrows - 1 and "capped at" in capped.focus_note
    keep = list(capped.focus)
    activity = np.isin(full.rows["type"], list(focus._ACTIVITY))
    want = full.rows[~activity | np.isin(full.rows["pid"], keep)
                     | (np.isin(full.rows["type"], focus._WAKEUPS) & np.isin(full.rows["peer_pid"], keep))]
    assert without_side_offsets(capped.rows).tobytes() == without_side_offsets(want).tobytes()


def test_closure_counts_hops():
    pairs = np.array([[10, 11], [11, 12], [12, 13]], np.int64)
    assert focus._closure(pairs, set(), 10) == {10: 0, 11: 1, 12: 2, 13: 3}
