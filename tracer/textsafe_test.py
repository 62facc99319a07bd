"""textsafe: control characters become visible escapes; markup stays text."""
import io

from argus.tracer import textsafe


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


def test_safe_console_leaves_emoji_codes_as_text():
    out = io.StringIO()
    c = textsafe.safe_console(file=out, force_terminal=False, width=200)
    c.print("thread :fire: of web:100: run")
    assert out.getvalue() == "thread :fire: of web:100: run\n"


def test_bidi_and_other_format_characters_are_escaped():
    # "evil\u202egnp.exe" would display as "evilexe.png"
    assert textsafe.safe("evil\u202egnp.exe") == "evil\\u202egnp.exe"
    assert textsafe.safe("\u2066a\u2067b\u2068c\u2069") == "\\u2066a\\u2067b\\u2068c\\u2069"
    assert textsafe.safe("x\u200e\u200fy\u200b\ufeff") == "x\\u200e\\u200fy\\u200b\\ufeff"
    assert textsafe.safe("tag\U000e0041") == "tag\\U000e0041"          # plane-14 tag, Cf too
    assert textsafe.safe_lines("a\u2028b\n\tc\u202a") == "a\\u2028b\n\tc\\u202a"


def test_every_format_character_is_escaped_and_printable_text_kept():
    import sys
    import unicodedata

    for cp in range(0xA0, sys.maxunicode + 1):
        c = chr(cp)
        cat = unicodedata.category(c)
        if cat in ("Cf", "Zl", "Zp"):
            assert textsafe.safe(c).startswith("\\"), hex(cp)
        elif cat[0] in "LNPS":
            assert textsafe.safe(c) == c, hex(cp)
