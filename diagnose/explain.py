"""What a Diagnosis says beyond the chain (issue 13): each root cause's CPU
profile (profile.py) and what-if slack (whatif.py), and for a LongWait
hang the differential view of its wait against its baselines (compare.py).

Algorithm: after Algorithm 1, for every root cause: LongRunning and
RepeatedYield ones get the profile of their thread over their interval (None
without CPU samples); every one gets its what-if slack.  Both are plain
JSON-able dicts on the RootCause, rendered by report.py.
Invariant: explain() only adds fields; the chain and the root causes are
those Algorithm 1 found.
"""
from argus.diagnose import blocktype as B
from argus.diagnose import compare as C
from argus.diagnose import profile as P
from argus.diagnose import whatif as W


def explain(d):
    g = d.graph
    if P.has_samples(g):
        for r in d.root_causes:
            if r.block_type in (B.LONG_RUNNING, B.REPEATED_YIELD):
                r.profile = P.build_profile(g, r.utid, r.start_ns, r.end_ns)
    if d.hang.classification.block_type == B.LONG_WAIT:
        d.compare = C.compare(g, d.hang.vertex, d.threshold_ns)
    slack = W.what_if(d)
    for r in d.root_causes:
        r.whatif = slack.get(id(r))
    return d
