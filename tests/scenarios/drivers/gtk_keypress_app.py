"""A GTK 3 window (PyGObject, Debian's /usr/bin/python3) whose key-press
handler computes SECONDS on the main thread: the key press itself starts
the hang.  Prints {"pid", "tid", "xid"} once the window is mapped (xid: its
X window, for the key sender), then {"done": true, "key": keyval} after the
handler returned; quits 1.5 s later (or after 30 s without a key).

  gtk_keypress_app.py SECONDS      (DISPLAY must name an X server)
"""
import json
import os
import sys
import threading
import time

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("GdkX11", "3.0")
from gi.repository import GdkX11, GLib, Gtk  # noqa: E402,F401 (GdkX11: get_xid)


def main():
    seconds = float(sys.argv[1])
    win = Gtk.Window(title="argus-keypress")
    label = Gtk.Label(label="press a key")
    win.add(label)

    def on_map(w, _event):
        print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id(),
                          "xid": w.get_window().get_xid()}), flush=True)
        return False

    def on_key(_w, event):
        end = time.monotonic() + seconds      # the hang: no X event is handled meanwhile
        total = 0
        while time.monotonic() < end:
            total += sum(i * i for i in range(5000))
        label.set_text(str(total))
        print(json.dumps({"done": True, "key": event.keyval}), flush=True)
        GLib.timeout_add(1500, Gtk.main_quit)
        return True

    win.connect("map-event", on_map)
    win.connect("key-press-event", on_key)
    win.show_all()
    GLib.timeout_add(30000, Gtk.main_quit)
    Gtk.main()


if __name__ == "__main__":
    main()
