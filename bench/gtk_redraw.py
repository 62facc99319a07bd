"""An interactive workload for bench/overhead.py: a GTK 3 window under an X
server redrawing as fast as it can, the way a busy desktop application does
(a drawing area painted with cairo, the frame pushed to the X server, and a
round trip to the server per frame, as an application that waits for its
last frame does).  Every frame is X11 socket traffic, poll() wakeups of the
GLib main loop and of the X server, and cairo work on the CPU.

  DISPLAY=:N /usr/bin/python3 bench/gtk_redraw.py FRAMES
Prints "frames/s VALUE" at the end.  Debian's python3-gi is built for the
system interpreter, hence /usr/bin/python3.
"""
import sys
import time
import warnings

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402


def main():
    warnings.simplefilter("ignore", DeprecationWarning)   # process_updates: the synchronous redraw wanted here
    frames = int(sys.argv[1])
    win = Gtk.Window(title="redraw")
    win.set_default_size(480, 360)
    area = Gtk.DrawingArea()
    win.add(area)
    state = {"n": 0, "t0": None}

    def draw(widget, cr):
        w, h = widget.get_allocated_width(), widget.get_allocated_height()
        n = state["n"]
        cr.set_source_rgb(1, 1, 1)
        cr.paint()
        for i in range(60):
            cr.set_source_rgb((i * 7 % 10) / 10, ((i + n) % 10) / 10, 0.5)
            cr.rectangle((i * 37 + n * 3) % w, (i * 23) % h, 40, 12)
            cr.fill()
        cr.set_source_rgb(0, 0, 0)
        cr.move_to(10, 20)
        cr.show_text(f"frame {n}")
        return False

    def step():
        if state["t0"] is None:
            state["t0"] = time.monotonic()
        area.queue_draw()
        gdk_win = win.get_window()
        if gdk_win is not None:
            gdk_win.process_updates(True)
        Gdk.Display.get_default().sync()      # one round trip to the X server per frame
        state["n"] += 1
        if state["n"] >= frames:
            Gtk.main_quit()
            return False
        return True

    area.connect("draw", draw)
    win.connect("map-event", lambda *a: GLib.idle_add(step) and False)
    win.show_all()
    Gtk.main()
    dt = time.monotonic() - state["t0"]
    print(f"frames/s {frames / dt:.1f}", flush=True)


if __name__ == "__main__":
    main()
