"""cmd_debug's report notes (_notes) on a real decode of the golden trace."""
import dataclasses
import pathlib

from argus.cli import cmd_debug
from argus.tracer import reader

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "golden.argus"


def test_a_capped_focused_window_says_what_the_cap_left_out():
    t = reader.decode_file(str(GOLDEN), strict=False)
    assert not any("busy window" in n for n in cmd_debug._notes(t))
    focused = dataclasses.replace(t, focus=frozenset({1, 2, 3}))
    assert any("the 3 processes within 4 wakeups" in n for n in cmd_debug._notes(focused))
    capped = dataclasses.replace(focused, focus_note="the window's rows were capped at 10: kept 1 of 4")
    notes = [n for n in cmd_debug._notes(capped) if "busy window" in n]
    assert len(notes) == 1 and "capped at 10" in notes[0] and "within 4" not in notes[0]


def test_the_fallback_window_holds_about_the_events_asked():
    from argus.tracer import stream
    table = stream.chunk_table(str(GOLDEN))
    total = int(table["nrecords"].sum())
    assert cmd_debug._last_events_s(str(GOLDEN), total) is None            # the whole buffer is small enough
    s = cmd_debug._last_events_s(str(GOLDEN), total // 3)
    end = int(table["last_ts"].max())
    held = stream.records_in(table, end - int(s * 1e9), end)
    assert 0 < s < (end - int(table["first_ts"].min())) / 1e9 and held <= total // 3 + int(table["nrecords"].max())


def test_lost_records_and_switches_the_kernel_never_reported_are_named_apart():
    t = reader.decode_file(str(GOLDEN), strict=False)
    assert not any("lost" in n or "never reported" in n for n in cmd_debug._notes(t))
    notes = cmd_debug._notes(dataclasses.replace(t, records_lost=3, switches_unreported=1234))
    assert [n for n in notes if "records were lost" in n] == ["3 records were lost before reaching the buffer"]
    unreported = [n for n in notes if "never reported" in n]
    assert len(unreported) == 1 and unreported[0].startswith("1,234 context switches")
