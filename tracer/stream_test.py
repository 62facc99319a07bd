"""Streaming decode (stream.py) against the whole-buffer decode, on the
checked-in golden trace (recorded by argusd from real programs)."""
import pathlib

import numpy as np
import pytest

from argus.tracer import reader, schema, stream

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "golden.argus"


@pytest.mark.parametrize("per_window", [1, 3, 1000])
def test_windows_concatenate_to_the_whole_decode(per_window):
    whole = reader.decode_file(GOLDEN)
    parts = list(stream.iter_windows(GOLDEN, per_window))
    if per_window == 1:
        assert len(parts) > 10                  # really several windows
    got = np.concatenate([without_side_offsets(p.rows) for p in parts])
    assert got.dtype == schema.ROW_DTYPE and len(got) == whole.nrows
    assert got.tobytes() == without_side_offsets(whole.rows).tobytes()
    # stacks and paths index each window's own side arrays: same contents
    assert side_contents([whole]) == side_contents(parts)


def without_side_offsets(rows):
    """Rows with the side-array offsets (per decode) zeroed."""
    rows = rows.copy()
    rows["obj"][rows["type"] == schema.USER_STACK] = 0
    rows["peer_tid"][rows["type"] == schema.MAPPING] = 0
    return rows


def side_contents(traces):
    out = []
    for t in traces:
        for row in t.rows:
            if row["type"] == schema.USER_STACK:
                out.append(tuple(int(f) for f in t.stack_frames(row)))
            elif row["type"] == schema.MAPPING:
                out.append(t.mapping_path(row))
    assert out
    return out


def test_windows_partition_the_time_axis():
    cuts = stream.windows(stream.chunk_table(GOLDEN), 2)
    assert cuts[0][0] == 0 and cuts[-1][1] == (1 << 64) - 1
    assert all(a[1] + 1 == b[0] for a, b in zip(cuts, cuts[1:]))
    assert all(hint > 1024 for _, _, hint in cuts)    # each window has chunks to read


def test_type_filtered_decode_sees_the_whole_range():
    whole = reader.decode_file(GOLDEN)
    kinds = [schema.FORK, schema.EXEC]
    names = reader.decode_file(GOLDEN, types=kinds, rows_hint=16)     # rows grow past the hint
    assert 16 < names.nrows < whole.nrows and set(names.rows["type"]) == set(kinds)
    assert (names.seen_first_ts, names.seen_last_ts) == (whole.first_ts, whole.last_ts)
    assert names.rows.tobytes() == whole.rows[np.isin(whole.rows["type"], kinds)].tobytes()


def test_growing_window_equals_one_decode_of_the_wider_window():
    """A window widened on both sides (stream.GrowingWindow) holds the rows of
    one decode of the wider window, side arrays included, and decodes each
    part once."""
    st = reader.buffer_stats(GOLDEN)
    lo, hi = int(st["first_ts"]), int(st["last_ts"])
    mid, span = (lo + hi) // 2, hi - lo
    grow = stream.GrowingWindow(str(GOLDEN))
    steps = [(mid - span // 10, mid + span // 10), (mid - span // 4, mid + span // 10),
             (mid - span // 4, mid + span // 3), (None, None)]
    for since, until in steps:
        got = grow.load(since, until)
        want = reader.decode_file(GOLDEN, strict=False, since_ns=since, until_ns=until) if since is not None \
            else reader.decode_file(GOLDEN, strict=False)
        assert got.nrows == want.nrows > 0
        assert without_side_offsets(got.rows).tobytes() == without_side_offsets(want.rows).tobytes()
        assert side_contents([got]) == side_contents([want])
        assert got.first_window_ts == want.first_window_ts or since is None
    # every widening decoded only what it added (plus the chunks across a bound)
    assert grow.decoded_rows < 2 * reader.decode_file(GOLDEN).nrows
