"""memcheck: the estimate counts the records a load reads (golden trace) and
refuses with one line only when they do not fit."""
import pathlib

import pytest

from argus.cli.common import ArgusError
from argus.cli.memcheck import PEAK_BYTES_PER_EVENT, check_load, mem_available
from argus.tracer import reader, stream

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "golden.argus"


def test_records_in_counts_what_the_decode_reads():
    table = stream.chunk_table(GOLDEN)
    whole = reader.decode_file(GOLDEN)
    assert stream.records_in(table, 0, (1 << 64) - 1) == whole.nrows
    mid = (whole.first_ts + whole.last_ts) // 2
    late = reader.decode_file(GOLDEN, since_ns=mid, keep_state=False)
    assert stream.records_in(table, mid, (1 << 64) - 1) == late.nrows < whole.nrows


def test_refuses_only_what_does_not_fit():
    need = reader.decode_file(GOLDEN).nrows * PEAK_BYTES_PER_EVENT
    check_load(str(GOLDEN), None, None, widening=False, avail=need)        # fits exactly
    with pytest.raises(ArgusError) as e:
        check_load(str(GOLDEN), None, None, widening=False, avail=need - 1)
    assert "\n" not in str(e.value) and "the whole buffer holds 44,394 events" in str(e.value)
    with pytest.raises(ArgusError, match="may lie before the last window"):
        check_load(str(GOLDEN), 1, 2 ** 63, widening=True, avail=1)
    assert mem_available() > 0
