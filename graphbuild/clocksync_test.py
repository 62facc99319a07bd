"""Clock synchronisation from message pairs: constructed exchanges between
hosts whose clocks differ by a known offset and drift."""
import numpy as np
import pytest

from argus.graphbuild import clocksync as CS

A = 5_000_000_000          # where the drift's line crosses the offset (host clock)


def _to_y(x, offset, drift_ns_s):
    """X's time -> Y's clock, where X = Y + offset + drift * (Y - A) / 1e9."""
    return (np.asarray(x, dtype=np.float64) - offset + drift_ns_s * A / 1e9) / (1 + drift_ns_s / 1e9)


def _truth(t, offset, drift_ns_s):
    return offset + drift_ns_s * (t - A) / 1e9


def _exchange(offset, drift, n=200, span=10e9, seed=1, min_delay=20e3, both=True):
    """(xy, yx) pairs: requests X -> Y and replies Y -> X, each delayed 20-200 us."""
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(1e9, 1e9 + span, n))
    d1 = min_delay + rng.exponential(60e3, n)
    d2 = min_delay + rng.exponential(60e3, n)
    xy = np.stack([t, _to_y(t + d1, offset, drift)], axis=1)
    yx = np.stack([_to_y(t + d1 + 30e3, offset, drift), t + d1 + 30e3 + d2], axis=1)
    return xy, (yx if both else np.zeros((0, 2)))


@pytest.mark.parametrize("offset,ppm", [(2.7e9, 100), (-1.3e9, 100), (0.0, 0), (123456.0, -40)])
def test_offset_and_drift_within_bounds_that_contain_the_truth(offset, ppm):
    drift = ppm * 1000.0
    xy, yx = _exchange(offset, drift)
    link = CS.estimate(xy, yx)
    truth = _truth(link.anchor, offset, drift)
    lo, hi = link.offset_bounds(link.anchor)
    assert lo <= truth <= hi
    assert abs(link.c - truth) < 100e3
    dlo, dhi = link.drift_bounds()
    assert dlo <= drift <= dhi
    assert abs(link.d - drift) < 20e3          # 20 ppm
    for t in (1e9, 6e9, 11e9):                 # bounds hold across the trace, not only at the anchor
        lo, hi = link.offset_bounds(t)
        assert lo <= _truth(t, offset, drift) <= hi


def test_one_direction_only_is_unbounded():
    xy, yx = _exchange(1e9, 0, both=False)
    link = CS.estimate(xy, yx)
    assert link.method != "convex-hull"
    assert link.offset_bounds(link.anchor) is None
    assert link.c >= max(xy[:, 0] - xy[:, 1])       # still on the causal side of every pair


def test_a_pair_no_line_orders_is_inconsistent():
    xy = [(100.0, 50.0)]          # received 50 ns "before" (Y) ...
    yx = [(60.0, 0.0)]            # ... and a reply that needs the opposite
    link = CS.estimate(xy, yx)
    assert link.method == "inconsistent"


def test_synchronise_chains_through_a_middle_host():
    # host 1 = host 0 + (-1.3 s, 100 ppm); host 2 = host 0 + (2.7 s, 100 ppm), linked only via host 1
    o1, d1, o2, d2 = 1.3e9, -100e3, -2.7e9, -100e3     # host k's clock -> host 0's
    rng = np.random.default_rng(7)
    t = np.sort(rng.uniform(1e9, 11e9, 300))
    pairs = {}
    pairs[(0, 1)] = np.stack([t, _to_y(t + 40e3, o1, d1)], 1)
    pairs[(1, 0)] = np.stack([_to_y(t + 90e3, o1, d1), t + 140e3], 1)
    # host 1 <-> host 2 in host 0's time, then each on its own clock
    pairs[(1, 2)] = np.stack([_to_y(t + 50e3, o1, d1), _to_y(t + 80e3, o2, d2)], 1)
    pairs[(2, 1)] = np.stack([_to_y(t + 85e3, o2, d2), _to_y(t + 110e3, o1, d1)], 1)
    clocks = CS.synchronise(3, {k: v.tolist() for k, v in pairs.items()})
    assert clocks[0].method == "reference"
    assert clocks[2].via == 1
    for k, (o, d) in ((1, (o1, d1)), (2, (o2, d2))):
        c = clocks[k]
        truth = _truth(c.anchor, o, d)
        assert abs(c.c - truth) < 100e3
        assert c.bounds[0] <= truth <= c.bounds[1]
        assert abs(int(c.to_ref(c.anchor)) - (c.anchor + truth)) < 100e3


def test_unlinked_host_is_unsynchronised():
    clocks = CS.synchronise(2, {})
    assert clocks[1].method == "unsynchronised" and clocks[1].bounds is None


def test_hull_points_cut_the_same_polygon_as_every_point(monkeypatch):
    xy, yx = _exchange(2.7e9, 100e3, n=80, seed=3)
    fast = CS.estimate(xy, yx)
    monkeypatch.setattr(CS, "_hull_candidates", lambda x, y, lower: list(range(len(x))))
    slow = CS.estimate(xy, yx)
    for t in (1e9, 6e9, 11e9):
        assert fast.offset_bounds(t) == pytest.approx(slow.offset_bounds(t), abs=1.0)
