"""A D-Bus service (PyGObject / GDBus, run by Debian's /usr/bin/python3) on a
private bus: it owns org.argus.Ledger and answers Recalculate(seconds) on its
main thread after sleeping that long (a slow backend call: the service
waits, it does not compute).

  dbus_service.py BUS_ADDRESS
Prints {"pid", "tid"} once the name is owned.
"""
import json
import os
import sys
import threading
import time

from gi.repository import Gio, GLib

XML = """<node><interface name="org.argus.Ledger">
  <method name="Recalculate"><arg type="d" direction="in"/><arg type="s" direction="out"/></method>
</interface></node>"""


def main():
    conn = Gio.DBusConnection.new_for_address_sync(
        sys.argv[1], Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    iface = Gio.DBusNodeInfo.new_for_xml(XML).interfaces[0]

    def call(conn, sender, path, iface_name, method, params, invocation):
        (seconds,) = params.unpack()
        time.sleep(seconds)
        invocation.return_value(GLib.Variant("(s)", (f"recalculated in {seconds} s",)))

    conn.register_object("/org/argus/Ledger", iface, call, None, None)
    loop = GLib.MainLoop()

    def owned(*_):
        print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)

    Gio.bus_own_name_on_connection(conn, "org.argus.Ledger", Gio.BusNameOwnerFlags.NONE, owned, None)
    loop.run()


if __name__ == "__main__":
    main()
