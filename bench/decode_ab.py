#!/usr/bin/env python3
"""A/B of the C decoder's per-record cost: argus_decode_file of one buffer,
N times in a fresh process per measurement, with two libargus_core builds
alternating (order flipped every round), CPU time per row; medians compared.

    python3 bench/decode_ab.py OLD/libargus_core.so NEW/libargus_core.so tests/data/golden.argus 400 12

A small buffer decoded many times measures the decode itself (no 2 GiB of
I/O, no page-cache state), which on a loaded machine is the only figure
stable enough to compare.  Nothing is asserted.
"""
import ctypes, json, subprocess, sys
CHILD = r'''
import ctypes, resource, sys, json
lib = ctypes.CDLL(sys.argv[1])
class R(ctypes.Structure):
    _fields_ = [("rows", ctypes.c_void_p), ("nrows", ctypes.c_uint64), ("pad", ctypes.c_char * 4096)]
lib.argus_decode_file.argtypes = [ctypes.c_char_p, ctypes.c_void_p]
lib.argus_decode_free.argtypes = [ctypes.c_void_p]
n = int(sys.argv[3]); rows = 0
u0 = resource.getrusage(resource.RUSAGE_SELF)
for _ in range(n):
    r = R(); lib.argus_decode_file(sys.argv[2].encode(), ctypes.byref(r)); rows += r.nrows; lib.argus_decode_free(ctypes.byref(r))
u1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"rows": rows, "cpu": u1.ru_utime - u0.ru_utime + u1.ru_stime - u0.ru_stime}))
'''
libs = {"main": sys.argv[1], "branch": sys.argv[2]}
res = {k: [] for k in libs}
for i in range(int(sys.argv[5])):
    for name in (["main", "branch"] if i % 2 == 0 else ["branch", "main"]):
        out = json.loads(subprocess.run([sys.executable, "-c", CHILD, libs[name], sys.argv[3], sys.argv[4]], capture_output=True, text=True, check=True).stdout)
        res[name].append(out["rows"] / out["cpu"] / 1e6)
for name, v in res.items():
    print(f"{name}: {' '.join(f'{x:.2f}' for x in v)} M rows/CPU-s; best {max(v):.2f}")
import statistics as st
print(f"median main {st.median(res['main']):.2f}, branch {st.median(res['branch']):.2f}: branch/main {st.median(res['branch']) / st.median(res['main']):.3f}")
