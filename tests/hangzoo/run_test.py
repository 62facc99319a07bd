"""run.py's case selection: by mechanism and by language (no tracing)."""
import argparse
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import run  # noqa: E402


def _args(**kw):
    return argparse.Namespace(**{"seed": 1, "fast": True, "only": None, "lang": None, **kw})


def test_lang_selects_the_cases_of_those_languages():
    go = run.select_cases(_args(lang="go"))
    assert go and {c.lang for c in go} == {"go"}
    both = run.select_cases(_args(lang="go,c"))
    assert {c.lang for c in both} == {"go", "c"} and len(both) < len(run.select_cases(_args()))
    mixed = run.select_cases(_args(lang="go", only="channel"))
    assert mixed and all(c.lang == "go" and "channel" in c.mechanisms() for c in mixed)


def test_an_unknown_language_is_one_clear_error():
    with pytest.raises(ValueError, match="unknown language rust"):
        run.select_cases(_args(lang="rust"))
