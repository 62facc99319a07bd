"""The obj of an `input` record, decoded (dylib-instrument/hooks/xcb.json
writes it; docs/event-schema.md):

  byte 0     the event code: 2 KeyPress, 3 KeyRelease, 4 ButtonPress,
             5 ButtonRelease (X11's core numbering, which XInput 2 shares);
             bit 7 set: a core event another client sent (XSendEvent)
  byte 1     the detail: keycode (keys) or button number (buttons)
  bytes 2-3  the X request sequence number of the event
  bytes 4-7  the X server timestamp, in ms
"""

KINDS = {2: "key_press", 3: "key_release", 4: "button_press", 5: "button_release"}


def fields(obj):
    """{"kind", "detail", "x_time_ms", "synthetic"} of an input record's obj."""
    obj = int(obj)
    code = obj & 0x7F
    return {"kind": KINDS.get(code, str(code)), "detail": (obj >> 8) & 0xFF, "x_time_ms": (obj >> 32) & 0xFFFFFFFF,
            "synthetic": bool(obj & 0x80)}


def describe(obj):
    """'key_press keycode 65 at X time 22462075 ms' (text form)."""
    f = fields(obj)
    what = "keycode" if f["kind"].startswith("key") else "button"
    return (f"{f['kind']} {what} {f['detail']} x_time={f['x_time_ms']}ms"
            + (" (synthetic)" if f["synthetic"] else ""))
