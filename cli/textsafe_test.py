"""textsafe: control characters become visible escapes; markup stays text."""
import io

from argus.cli import textsafe


def test_safe_escapes_c0_del_c1_and_keeps_the_rest():
    assert textsafe.safe("\x1b[8mhidden\x07") == "\\e[8mhidden\\x07"
    assert textsafe.safe("a\nb\tc\x7f\x9b2J") == "a\\x0ab\\x09c\\x7f\\x9b2J"
    assert textsafe.safe("redis-server [bold] é 日本") == "redis-server [bold] é 日本"


def test_safe_lines_keeps_newlines_and_tabs():
    assert textsafe.safe_lines("x\x1b]0;title\x07\n\ty\x85") == "x\\e]0;title\\x07\n\ty\\x85"


def test_safe_console_prints_markup_and_escapes_literally():
    from rich.table import Table

    out = io.StringIO()
    c = textsafe.safe_console(file=out, force_terminal=False, width=200)
    c.print("[bold]evil[/bold]\x1b[2J", "x")
    t = Table()
    t.add_column("name")
    t.add_row("[red]\x1b[8mhide")
    c.print(t)
    text = out.getvalue()
    assert "[bold]evil[/bold]\\e[2J x" in text and "[red]\\e[8mhide" in text
    assert "\x1b" not in text
