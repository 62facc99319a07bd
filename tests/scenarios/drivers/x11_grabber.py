"""An X client that grabs the X server (XGrabServer through GDK, as
screenshot and window-management tools do) and holds the grab for SECONDS
while it sleeps: every other client's requests wait in the server.

  x11_grabber.py SECONDS      (DISPLAY must name an X server)
Prints {"pid", "tid"}, then waits for a line on stdin, grabs, prints
{"grabbed": true}, sleeps, ungrabs and exits.
"""
import json
import os
import sys
import threading
import time

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("GdkX11", "3.0")
from gi.repository import Gdk, GdkX11  # noqa: E402,F401


def main():
    seconds = float(sys.argv[1])
    Gdk.init([])
    display = Gdk.Display.get_default()
    print(json.dumps({"pid": os.getpid(), "tid": threading.get_native_id()}), flush=True)
    sys.stdin.readline()
    display.grab()
    display.sync()
    print(json.dumps({"grabbed": True}), flush=True)
    time.sleep(seconds)
    display.ungrab()
    display.sync()


if __name__ == "__main__":
    main()
