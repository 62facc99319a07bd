"""The windowed load: the windows stop at the process's birth (its fork)
instead of going on to the whole buffer; on the golden trace."""
import pathlib

from argus.diagnose import windowed

GOLDEN = str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "golden.argus")
FIRST_TS, LAST_TS = 2550600126879, 2550729712538
BORN = (11666, 2550672763536)        # forked by bash 11628, 72 s into the trace


def test_process_birth_is_its_fork():
    assert windowed.process_birth(GOLDEN, BORN[0]) == BORN[1]
    assert windowed.process_birth(GOLDEN, 11628) is None      # older than the trace
    assert windowed.process_birth(GOLDEN, None) is None


def test_widening_stops_at_the_birth():
    asked = []

    def birth():
        asked.append(1)
        return BORN[1]
    wins = list(windowed.windows(GOLDEN, 0.005, birth=birth))
    assert asked == [1]                                   # once, after the first window
    assert wins[-1] == (BORN[1], None, FIRST_TS, True)    # not the whole buffer
    assert all(not last and since > BORN[1] for since, _, _, last in wins[:-1])


def test_without_a_birth_the_last_window_is_the_whole_buffer():
    wins = list(windowed.windows(GOLDEN, 0.005))
    assert wins[-1] == (None, None, FIRST_TS, True) and len(wins) > 3
    assert [since for since, *_ in wins[:-1]] == sorted((s for s, *_ in wins[:-1]), reverse=True)


def test_a_widest_window_is_the_last():
    # centred on a hang the ring index named: at most 20 ms either side (the trace is 130 ms), never
    # the whole buffer
    at = (FIRST_TS + LAST_TS) // 2
    ms = 10 ** 6
    wins = list(windowed.windows(GOLDEN, 0.002, at_ns=at, max_window_s=0.02))
    assert wins[-1] == (at - 20 * ms, at + 20 * ms, FIRST_TS, True)
    assert [(w[1] - w[0]) // ms for w in wins[:-1]] == [4, 8, 16, 32]
    assert not any(last for *_, last in wins[:-1])
    # at the buffer's end: the last 30 ms
    assert list(windowed.windows(GOLDEN, 0.05, max_window_s=0.03)) == [(LAST_TS - 30 * ms, None, FIRST_TS, True)]
