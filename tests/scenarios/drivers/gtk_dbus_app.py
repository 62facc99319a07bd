"""A GTK 3 application (PyGObject, Debian's /usr/bin/python3) that makes a
synchronous D-Bus call from its main loop: a label is refreshed from a GLib
timeout every 50 ms; after 1.5 s a "recalculate" callback calls the ledger
service with Gio.DBusConnection.call_sync, which blocks the main thread in
a nested main loop (a private GMainContext, polled) until the service
answers.

  gtk_dbus_app.py BUS_ADDRESS SECONDS     (DISPLAY must name an X server)
Prints {"pid", "tid"} first, then {"reply"}.
"""
import json
import os
import sys
import threading

import gi

gi.require_version("Gtk", "3.0")
from gi.repository import Gio, GLib, Gtk  # noqa: E402


def main():
    address, seconds = sys.argv[1], float(sys.argv[2])
    conn = Gio.DBusConnection.new_for_address_sync(
        address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    win = Gtk.Window(title="ledger")
    label = Gtk.Label(label="0")
    win.add(label)
    win.show_all()
    state = {"ticks": 0}
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)

    def tick():
        state["ticks"] += 1
        label.set_text(str(state["ticks"]))
        return True

    def recalculate():
        reply = conn.call_sync("org.argus.Ledger", "/org/argus/Ledger", "org.argus.Ledger", "Recalculate",
                               GLib.Variant("(d)", (seconds,)), GLib.VariantType("(s)"),
                               Gio.DBusCallFlags.NONE, int((seconds + 20) * 1000), None)
        label.set_text(reply.unpack()[0])
        print(json.dumps({"reply": reply.unpack()[0]}), flush=True)
        return False

    GLib.timeout_add(50, tick)
    GLib.timeout_add(1500, recalculate)
    GLib.timeout_add(int((1.5 + seconds + 1.5) * 1000), Gtk.main_quit)
    Gtk.main()


if __name__ == "__main__":
    main()
