"""A GTK 3 desktop application (PyGObject, run by Debian's /usr/bin/python3)
whose main loop stalls: a label is refreshed from a GLib timeout every 50 ms,
then an idle "recalculate" callback computes for SECONDS on the main thread,
so GLib's main loop (which waits in poll()) handles no X event meanwhile.

  gtk_app.py SECONDS      (DISPLAY must name an X server)
Prints {"pid", "tid"} first.
"""
import json
import os
import sys
import threading
import time

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk  # noqa: E402


def main():
    seconds = float(sys.argv[1])
    win = Gtk.Window(title="ledger")
    box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
    label = Gtk.Label(label="0")
    box.add(label)
    box.add(Gtk.Button(label="recalculate"))
    win.add(box)
    win.show_all()
    state = {"ticks": 0}
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)

    def tick():
        state["ticks"] += 1
        label.set_text(str(state["ticks"]))
        return True

    def recalculate():
        end = time.monotonic() + seconds
        total = 0
        while time.monotonic() < end:
            total += sum(i * i for i in range(5000))
        label.set_text(str(total))
        return False

    GLib.timeout_add(50, tick)
    GLib.timeout_add(1500, recalculate)
    GLib.timeout_add(int((1.5 + seconds + 1.5) * 1000), Gtk.main_quit)
    Gtk.main()


if __name__ == "__main__":
    main()
