"""A D-Bus service started by bus activation (dbus-daemon runs it from a
.service file when the first call for org.argus.Indexer arrives).  At start
it builds its index, SECONDS of CPU on the main thread, and only then owns
the name; dbus-daemon holds the pending call until then.  Writes
{"pid", "tid"} to PIDFILE before it computes.

  dbus_activated_service.py PIDFILE SECONDS
"""
import json
import os
import sys
import threading
import time

from gi.repository import Gio, GLib

XML = """<node><interface name="org.argus.Indexer">
  <method name="Lookup"><arg type="s" direction="in"/><arg type="s" direction="out"/></method>
</interface></node>"""


def build_index(seconds):
    t0, n = time.monotonic(), 0
    while time.monotonic() - t0 < seconds:
        n += 1
    return n


def main():
    with open(sys.argv[1], "w") as f:
        json.dump({"pid": os.getpid(), "tid": threading.get_native_id()}, f)
    entries = build_index(float(sys.argv[2]))
    conn = Gio.bus_get_sync(Gio.BusType.STARTER, None)   # the bus that activated us
    iface = Gio.DBusNodeInfo.new_for_xml(XML).interfaces[0]

    def call(conn, sender, path, iface_name, method, params, invocation):
        (key,) = params.unpack()
        invocation.return_value(GLib.Variant("(s)", (f"{key}: one of {entries} entries",)))
        GLib.timeout_add(500, loop.quit)

    conn.register_object("/org/argus/Indexer", iface, call, None, None)
    loop = GLib.MainLoop()
    Gio.bus_own_name_on_connection(conn, "org.argus.Indexer", Gio.BusNameOwnerFlags.NONE, None, None)
    GLib.timeout_add_seconds(60, loop.quit)
    loop.run()


if __name__ == "__main__":
    main()
