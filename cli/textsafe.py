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
"""
import re

_FIELD = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape(m):
    c = m.group()
    return "\\e" if c == "\x1b" else f"\\x{ord(c):02x}"


def safe(text):
    """A field (a name, a path) with every control character escaped."""
    text = str(text)
    return _FIELD.sub(_escape, text) if _FIELD.search(text) else text


def safe_lines(text):
    """Output text with control characters escaped, newlines and tabs kept."""
    text = str(text)
    return _LINES.sub(_escape, text) if _LINES.search(text) else text


def safe_console(**kw):
    """A rich Console that prints every string through safe_lines and with
    markup off (the REPL's; rich passes through ESC and C1 codes itself)."""
    from rich.console import Console

    class SafeConsole(Console):
        def render_str(self, text, **k):
            k["markup"] = False
            return super().render_str(safe_lines(text), **k)

    kw.setdefault("markup", False)
    return SafeConsole(**kw)
