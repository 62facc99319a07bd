"""Speedscope JSON (https://www.speedscope.app/file-format-schema.json) of
CPU profiles: one "sampled" profile per thread window, frames shared.

Algorithm: every sample's named stack (diagnose/profile.py, innermost
first) is reversed into speedscope's outermost-first order and indexed into
the shared frame table; each sample weighs its sampling period in
nanoseconds.  Written 0600 like every file Argus derives from a trace.
Invariant: len(samples) == len(weights) per profile; frame indices < len(frames).
"""

from argus.diagnose import profile as P

SCHEMA = "https://www.speedscope.app/file-format-schema.json"


def document(g, windows, name="argus"):
    """windows: [(title, utid, a, b)] -> the speedscope dict (profiles without samples are left out)."""
    frames, index, profiles = [], {}, []
    namer = P.FrameNamer(g)
    for title, utid, a, b in windows:
        idx = P.sample_rows(g, utid, a, b)
        if not len(idx):
            continue
        periods = g.rows["aux"][idx].astype("int64") * 1000
        samples, weights = [], []
        for (ts, st), w in zip(P.named_stacks(g, idx, namer), periods.tolist()):
            stack = []
            for fn, dso in reversed(st or [("[no stack]", "[unknown]")]):
                k = index.get((fn, dso))
                if k is None:
                    k = index[(fn, dso)] = len(frames)
                    frames.append({"name": fn, "file": dso})
                stack.append(k)
            samples.append(stack)
            weights.append(int(w))
        profiles.append({"type": "sampled", "name": title, "unit": "nanoseconds", "startValue": 0,
                         "endValue": int(sum(weights)), "samples": samples, "weights": weights})
    return {"$schema": SCHEMA, "shared": {"frames": frames}, "profiles": profiles, "name": name,
            "exporter": "argus"}
