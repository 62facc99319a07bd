"""Clock offset and drift between two hosts, from matched message pairs.

Algorithm (the convex-hull synchronisation of Duda et al., as Trace Compass
uses it; facts from the papers, no code): a message is received after it
was sent.  Model host Y's clock against host X's as a line

    x(t) = t + c + d * (t - T) / 1e9        (t on Y's clock, x on X's)

c: the offset (ns) at the anchor T (a time on Y's clock in the middle of the
pairs), d: the drift (ns per s, 1 ppm = 1000).  Each pair is one linear
constraint on (c, d):
    X -> Y, sent at s (X), received at r (Y):  x(r) > s   i.e.  c + d (r - T)/1e9 > s - r
    Y -> X, sent at s (Y), received at r (X):  x(s) < r   i.e.  c + d (s - T)/1e9 < r - s
The constraints of both directions cut the (c, d) plane to a convex polygon
(the dual of the gap between the lower hull of one direction's points and
the upper hull of the other's); every line in it orders every pair
causally, and the true clocks are one of them.  The estimate is the
polygon's centroid (the line in the middle of the gap); the bounds are the
polygon's extent, exact for the offset at any time (a linear function of
(c, d) is extreme at a vertex).  Only one direction, or pairs bunched at
one time: the polygon is unbounded in some direction, and the reported
bounds say so (None); drift 0 is assumed then (the minimum-delay method:
the offset between the tightest pair of each direction).

The polygon is cut from a box by half-planes one at a time
(Sutherland-Hodgman on a convex polygon): there is no LP solver among the
dependencies, and a few hundred vertices-times-pairs is nothing.

Invariants: a Link's bounds contain every (c, d) that orders all its pairs
causally; an empty polygon (a pair that no line orders: a mismatched pair,
or a clock that stepped) is reported as inconsistent and falls back to the
minimum-delay offset.
"""
import dataclasses

import numpy as np

BOX_C = 1e15          # ns: |offset| up to 11 days
BOX_D = 1e6           # ns/s: |drift| up to 1000 ppm


@dataclasses.dataclass
class Link:
    """Y's clock against X's: x = t + c + d * (t - anchor) / 1e9."""
    c: float                      # offset at the anchor, ns
    d: float                      # drift, ns per s (1 ppm = 1000)
    anchor: int                   # ns, on Y's clock
    vertices: list                # the feasible polygon [(c, d)], [] when unbounded / inconsistent
    pairs_xy: int = 0
    pairs_yx: int = 0
    method: str = "convex-hull"   # | minimum-delay | inconsistent

    def offset_at(self, t):
        return self.c + self.d * (t - self.anchor) / 1e9

    def offset_bounds(self, t):
        """(lo, hi) of the offset at t over the feasible polygon; None when unbounded."""
        if not self.vertices:
            return None
        vals = [c + d * (t - self.anchor) / 1e9 for c, d in self.vertices]
        return min(vals), max(vals)

    def drift_bounds(self):
        if not self.vertices:
            return None
        ds = [d for _, d in self.vertices]
        return min(ds), max(ds)


def _clip(poly, a, b, k):
    """The part of convex polygon poly [(c, d)] where a*c + b*d >= k."""
    out = []
    n = len(poly)
    for i in range(n):
        p, q = poly[i], poly[(i + 1) % n]
        fp = a * p[0] + b * p[1] - k
        fq = a * q[0] + b * q[1] - k
        if fp >= 0:
            out.append(p)
        if (fp >= 0) != (fq >= 0):
            t = fp / (fp - fq)
            out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
    return out


def _centroid(poly):
    if len(poly) < 3:
        return tuple(np.mean(np.array(poly), axis=0)) if poly else (0.0, 0.0)
    area = cx = cy = 0.0
    x0, y0 = poly[0]
    for i in range(1, len(poly) - 1):         # a fan from vertex 0, relative to it (no cancellation)
        x1, y1 = poly[i][0] - x0, poly[i][1] - y0
        x2, y2 = poly[i + 1][0] - x0, poly[i + 1][1] - y0
        cross = x1 * y2 - x2 * y1
        area += cross
        cx += (x1 + x2) * cross
        cy += (y1 + y2) * cross
    if area == 0:
        return tuple(np.mean(np.array(poly), axis=0))
    return x0 + cx / (3 * area), y0 + cy / (3 * area)


def _hull_candidates(x, y, lower):
    """Indices of the points (x, y) on the lower (or upper) convex hull:
    only those can be a binding constraint, so the polygon is cut by them
    alone (monotone chain)."""
    order = np.lexsort((y, x))
    keep = []
    for i in order.tolist():
        while len(keep) >= 2:
            o, a = keep[-2], keep[-1]
            cross = (x[a] - x[o]) * (y[i] - y[o]) - (y[a] - y[o]) * (x[i] - x[o])
            if (cross <= 0) if lower else (cross >= 0):
                keep.pop()
            else:
                break
        keep.append(i)
    return keep


def estimate(xy, yx):
    """The Link of Y's clock against X's.  xy: [(sent on X, received on Y)],
    yx: [(sent on Y, received on X)], ns.  None when there is no pair."""
    xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
    yx = np.asarray(yx, dtype=np.float64).reshape(-1, 2)
    if not len(xy) and not len(yx):
        return None
    ty = np.concatenate([xy[:, 1], yx[:, 0]])
    anchor = int(round((ty.min() + ty.max()) / 2))
    # X -> Y: c + d*u >= s - r with u = (r - T)/1e9: the points (u, s - r)
    # lie below the line c + d u, so only their upper hull binds; Y -> X:
    # c + d*u <= r - s, the lower hull of (u, r - s).
    u1, v1 = (xy[:, 1] - anchor) / 1e9, xy[:, 0] - xy[:, 1]
    u2, v2 = (yx[:, 0] - anchor) / 1e9, yx[:, 1] - yx[:, 0]
    lo = max(v1) if len(v1) else None          # minimum-delay bounds on the offset (drift 0)
    hi = min(v2) if len(v2) else None
    poly = [(-BOX_C, -BOX_D), (BOX_C, -BOX_D), (BOX_C, BOX_D), (-BOX_C, BOX_D)]
    for i in _hull_candidates(u1, v1, lower=False) if len(v1) else []:
        poly = _clip(poly, 1.0, u1[i], v1[i])
    for i in _hull_candidates(u2, v2, lower=True) if len(v2) else []:
        poly = _clip(poly, -1.0, -u2[i], -v2[i])
    link = Link(c=0.0, d=0.0, anchor=anchor, vertices=[], pairs_xy=len(xy), pairs_yx=len(yx))
    bounded = poly and all(abs(c) < BOX_C * 0.999 and abs(d) < BOX_D * 0.999 for c, d in poly)
    if len(poly) >= 3 and bounded:
        link.c, link.d = _centroid(poly)
        link.vertices = [(float(c), float(d)) for c, d in poly]
        return link
    link.method = "minimum-delay" if poly else "inconsistent"
    if lo is not None and hi is not None:
        link.c = (lo + hi) / 2
    else:
        link.c = lo if lo is not None else hi
    if poly and lo is not None and hi is not None:
        # drift unknown (pairs at one time): the offset bounds at drift 0
        link.vertices = [(lo, 0.0), (hi, 0.0)]
    return link


@dataclasses.dataclass
class Clock:
    """A host's clock against the reference host's: ref = t + offset_at(t)."""
    c: float = 0.0
    d: float = 0.0
    anchor: int = 0
    bounds: object = None         # (lo, hi) of the offset at the anchor, None: unknown
    via: int = -1                 # the host it was synchronised against (-1: the reference)
    method: str = "reference"
    pairs: int = 0

    def offset_at(self, t):
        return self.c + self.d * (np.asarray(t, dtype=np.float64) - self.anchor) / 1e9

    def to_ref(self, ts):
        """ts (uint64 array or int on this host's clock) -> the reference clock, int64."""
        ts = np.asarray(ts)
        return (ts.astype(np.int64) + np.rint(self.offset_at(ts)).astype(np.int64))


def compose(outer, link, outer_bounds_at=None):
    """The Clock of Y from the Link of Y against X and X's Clock (outer).
    outer_bounds_at(t): X's offset bounds at t on X's clock (None: X is the
    reference, exact)."""
    t = link.anchor
    tx = t + link.c                              # the anchor on X's clock
    c = link.c + float(outer.offset_at(tx))
    d = link.d + outer.d + link.d * outer.d / 1e9
    lb = link.offset_bounds(t)
    ob = (0.0, 0.0) if outer_bounds_at is None else outer_bounds_at(tx)
    bounds = None if lb is None or ob is None else (lb[0] + ob[0], lb[1] + ob[1])
    return Clock(c=c, d=d, anchor=int(t), bounds=bounds, method=link.method,
                 pairs=link.pairs_xy + link.pairs_yx)


def synchronise(nhosts, pairs):
    """Clocks of every host against host 0.  pairs: {(sender host, receiver
    host): [(t_send, t_recv)]} on each one's own clock.  Hosts reached by
    the most pairs first (a spanning tree from host 0, widest links first);
    a host with no path to host 0 keeps Clock(method="unsynchronised")."""
    links = {}
    for x in range(nhosts):
        for y in range(nhosts):
            if x < y and (pairs.get((x, y)) or pairs.get((y, x))):
                links[(x, y)] = (len(pairs.get((x, y), ())), len(pairs.get((y, x), ())))
    clocks = {0: Clock()}
    bounds_fn = {0: None}
    while True:
        best = None
        for (x, y), (n1, n2) in links.items():
            for a, b in ((x, y), (y, x)):
                if a in clocks and b not in clocks:
                    score = (min(n1, n2) > 0, n1 + n2)
                    if best is None or score > best[0]:
                        best = (score, a, b)
        if best is None:
            break
        _, a, b = best
        link = estimate(pairs.get((a, b), ()), pairs.get((b, a), ()))
        clk = compose(clocks[a], link, bounds_fn[a])
        clk.via = a
        clocks[b] = clk
        bounds_fn[b] = _bounds_fn(link, clocks[a], bounds_fn[a])
    out = []
    for h in range(nhosts):
        out.append(clocks.get(h) or Clock(method="unsynchronised"))
    return out


def _bounds_fn(link, outer, outer_fn):
    def at(t):
        lb = link.offset_bounds(t)
        if lb is None:
            return None
        tx = t + link.offset_at(t)
        ob = (0.0, 0.0) if outer_fn is None else outer_fn(tx)
        return None if ob is None else (lb[0] + ob[0], lb[1] + ob[1])
    return at
