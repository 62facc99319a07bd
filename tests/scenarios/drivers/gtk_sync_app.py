"""A GTK 3 application (PyGObject, Debian's /usr/bin/python3) that makes a
synchronous X11 round trip in every frame: a timeout every 50 ms updates a
label and calls gdk_display_sync() (XSync: a request, then a wait in poll()
on the X socket until the server answers).

  gtk_sync_app.py SECONDS     (DISPLAY must name an X server)
Prints {"pid", "tid"} first; quits after SECONDS.
"""
import json
import os
import sys
import threading

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402


def main():
    seconds = float(sys.argv[1])
    win = Gtk.Window(title="monitor")
    label = Gtk.Label(label="0")
    win.add(label)
    win.show_all()
    display = Gdk.Display.get_default()
    state = {"ticks": 0}
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)

    def tick():
        state["ticks"] += 1
        label.set_text(str(state["ticks"]))
        display.sync()
        return True

    GLib.timeout_add(50, tick)
    GLib.timeout_add(int(seconds * 1000), Gtk.main_quit)
    Gtk.main()


if __name__ == "__main__":
    main()
