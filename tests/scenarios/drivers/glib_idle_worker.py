"""A GLib main loop (through ctypes) whose worker thread adds an idle source
to the loop's (default) context; the idle callback computes COMPUTE_S
seconds on the main thread.  Prints {"pid", "tid", "worker_tid", "ctx"} once
the worker runs, then {"done": true} when the loop quit."""
import ctypes
import json
import os
import sys
import threading
import time

COMPUTE_S = float(sys.argv[1]) if len(sys.argv) > 1 else 4.0
ADD_AFTER_S = float(sys.argv[2]) if len(sys.argv) > 2 else 1.0

g = ctypes.CDLL("libglib-2.0.so.0")
g.g_main_context_default.restype = ctypes.c_void_p
g.g_main_loop_new.restype = ctypes.c_void_p
g.g_main_loop_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
g.g_main_loop_run.argtypes = [ctypes.c_void_p]
g.g_main_loop_quit.argtypes = [ctypes.c_void_p]
SourceFunc = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
g.g_idle_add.argtypes = [SourceFunc, ctypes.c_void_p]

ctx = g.g_main_context_default()
loop = g.g_main_loop_new(None, 0)


def recalculate(_):
    end = time.monotonic() + COMPUTE_S      # the hang: the loop runs nothing else meanwhile
    n = 0
    while time.monotonic() < end:
        n += 1
    g.g_main_loop_quit(loop)
    return 0                                # G_SOURCE_REMOVE


callback = SourceFunc(recalculate)
started = threading.Event()
worker_tid = []


def worker():
    worker_tid.append(threading.get_native_id())
    started.set()
    time.sleep(ADD_AFTER_S)
    g.g_idle_add(callback, None)            # g_source_attach(source, NULL) from this thread


w = threading.Thread(target=worker, name="worker")
w.start()
started.wait()
print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id(), "worker_tid": worker_tid[0],
                  "ctx": ctx}), flush=True)
g.g_main_loop_run(loop)                     # waits in poll until the worker's attach wakes it
w.join()
print(json.dumps({"done": True}), flush=True)
