"""`argus events` streams window by window; its output must be the one of a
whole-buffer decode (the command before streaming), on the golden trace,
text and JSON, filtered and not."""
import argparse
import contextlib
import io
import pathlib

import pytest

from argus.cli import cmd_events
from argus.cli.tracefile import ThreadNames
from argus.tracer import reader

GOLDEN = str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "golden.argus")


def whole_decode_output(args):
    """What `argus events` printed when it decoded the whole buffer at once."""
    trace = reader.decode_file(GOLDEN, strict=False)
    rows = cmd_events.select_rows(trace.rows, args.pid, args.tid, args.type)
    if args.limit > 0:
        rows = rows[:args.limit]
    out = io.StringIO()
    cmd_events._write_rows(out, rows, ThreadNames(trace.rows), trace, int(trace.first_ts), args.json)
    return out.getvalue()


@pytest.mark.parametrize("extra", [[], ["--json"], ["--type", "switch_out", "--type", "mapping"],
                                   ["--pid", "11657", "--json"], ["--limit", "5000"]])
def test_streamed_output_is_the_whole_decode(extra):
    p = argparse.ArgumentParser()
    sub = p.add_subparsers()
    cmd_events.register(sub)
    args = p.parse_args(["events", "--buffer", GOLDEN, *extra])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cmd_events.run(args, chunks_per_window=2) == 0
    want = whole_decode_output(args)
    assert want and out.getvalue() == want
