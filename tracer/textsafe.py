"""Terminal-safe text: what a traced program chose (process and thread names,
mapping paths) never reaches the terminal as control codes.

A process can name itself "\\x1b[8m..." (prctl PR_SET_NAME) and hide or fake
everything printed after its name.  Every text output of the commands and
the REPL goes through here: C0 controls, DEL and C1 controls become visible
escapes (ESC as \\e, the rest as \\xNN), so what was recorded is still shown,
just inert.  safe() escapes a field (a name: newline and tab too, so a name
cannot fake a line); safe_lines() escapes a whole output (our own newlines and
tabs kept).  The REPL's rich console additionally renders with markup off,
so "[bold]" in a name is printed as is.  --json output needs none of this:
json.dumps escapes control characters itself.

Invisible format characters (Unicode category Cf: the bidi overrides and
isolates U+202A-202E / U+2066-2069, the marks U+200E/F, zero-width spaces
and joiners...) and the line and paragraph separators U+2028/9 are escaped
too, as \\uXXXX: "evil\\u202egnp.exe" would otherwise display reversed,
and a name could make a path or a line read as something else.
"""
import functools
import re
import unicodedata

_C0_C1 = r"\x00-\x1f\x7f-\x9f"
_C0_C1_NOT_NL_TAB = r"\x00-\x08\x0b-\x1f\x7f-\x9f"
_FIELD = re.compile(f"[{_C0_C1}]")
_LINES = re.compile(f"[{_C0_C1_NOT_NL_TAB}]")


@functools.cache
def _invisible_class():
    """A regex character class of every Cf, Zl and Zp code point (built on
    the first non-ASCII text: they all lie below U+30000 or in plane 14)."""
    ranges = []
    for cp in [*range(0xA0, 0x30000), *range(0xE0000, 0xE1000)]:
        if unicodedata.category(chr(cp)) in ("Cf", "Zl", "Zp"):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    return "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


@functools.cache
def _pattern(keep_lines):
    return re.compile(f"[{_C0_C1_NOT_NL_TAB if keep_lines else _C0_C1}{_invisible_class()}]")


def _escape(m):
    c = m.group()
    if c == "\x1b":
        return "\\e"
    cp = ord(c)
    return f"\\x{cp:02x}" if cp <= 0xff else f"\\u{cp:04x}" if cp <= 0xffff else f"\\U{cp:08x}"


def _sub(text, keep_lines):
    text = str(text)
    pattern = (_LINES if keep_lines else _FIELD) if text.isascii() else _pattern(keep_lines)
    return pattern.sub(_escape, text) if pattern.search(text) else text


def safe(text):
    """A field (a name, a path) with every control and format character escaped."""
    return _sub(text, keep_lines=False)


def safe_lines(text):
    """Output text with control and format characters escaped, newlines and tabs kept."""
    return _sub(text, keep_lines=True)


def safe_console(**kw):
    """A rich Console that prints every string through safe_lines, with
    markup and emoji codes off (the REPL's; rich passes through ESC and C1
    codes itself, and would turn "host:100:" or a thread named ":fire:"
    into a picture)."""
    from rich.console import Console  # local: only the REPL needs rich; keeps other commands' start-up short

    class SafeConsole(Console):
        def render_str(self, text, **k):
            k["markup"] = False
            return super().render_str(safe_lines(text), **k)

    kw.setdefault("markup", False)
    kw.setdefault("emoji", False)
    return SafeConsole(**kw)
