"""Issue 22, item 8: a GUI whose event thread blocks on a lock held by a
computing worker.  A tkinter application (Tcl/Tk 8.6) refreshes a label
from after() timers; at 1.0 s a worker thread takes the document lock and
recalculates for SECONDS; at 1.3 s a callback on the event thread takes
the same lock to redraw, and the window freezes until the worker is done.

  tk_lock_worker.py SECONDS      (DISPLAY must name an X server)
Prints {"pid", "tid"} first, then {"worker"} (its tid) at the end."""
import json
import os
import sys
import threading
import time
import tkinter as tk


def main():
    seconds = float(sys.argv[1])
    root = tk.Tk()
    root.title("document")
    label = tk.Label(root, text="0", width=30)
    label.pack()
    lock = threading.Lock()
    state = {"ticks": 0, "total": 0}
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)

    def recalculate():
        state["worker"] = threading.get_native_id()
        with lock:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                state["total"] += sum(i * i for i in range(5000))

    def tick():
        state["ticks"] += 1
        label.configure(text=str(state["ticks"]))
        root.after(50, tick)

    def redraw():
        with lock:                          # the event thread waits for the worker here
            label.configure(text=str(state["total"]))

    root.after(50, tick)
    root.after(1000, lambda: threading.Thread(target=recalculate, name="recalc", daemon=True).start())
    root.after(1300, redraw)
    root.after(int((1.3 + seconds + 1.5) * 1000), root.destroy)
    root.mainloop()
    print(json.dumps({"worker": state["worker"]}), flush=True)


if __name__ == "__main__":
    main()
