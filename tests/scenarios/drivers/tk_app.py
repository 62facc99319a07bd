"""A Tk desktop application (Python's tkinter on Tcl/Tk 8.6) whose main
loop stalls: a label is refreshed from after() timers every 50 ms, then a
"recalculate" callback runs a computation for SECONDS on the main thread,
so no X event is handled until it returns.

  tk_app.py SECONDS      (DISPLAY must name an X server)
Prints {"pid", "tid"} first.
"""
import json
import os
import sys
import threading
import time
import tkinter as tk


def main():
    seconds = float(sys.argv[1])
    root = tk.Tk()
    root.title("ledger")
    label = tk.Label(root, text="0", width=30)
    label.pack()
    tk.Button(root, text="recalculate").pack()
    state = {"ticks": 0}
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)

    def tick():
        state["ticks"] += 1
        label.configure(text=str(state["ticks"]))
        root.after(50, tick)

    def recalculate():
        end = time.monotonic() + seconds
        total = 0
        while time.monotonic() < end:
            total += sum(i * i for i in range(5000))
        label.configure(text=str(total))

    root.after(50, tick)
    root.after(1500, recalculate)
    root.after(int((1.5 + seconds + 1.5) * 1000), root.destroy)
    root.mainloop()


if __name__ == "__main__":
    main()
