"""run.py's case selection: by mechanism, language and id (no tracing)."""
import argparse
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import run  # noqa: E402


def _args(**kw):
    return argparse.Namespace(**{"seed": 1, "fast": True, "only": None, "lang": None, "cases": None, **kw})


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


def test_cases_picks_by_index_or_id_prefix_in_the_order_given():
    full = run.select_cases(_args(fast=False))
    picked = run.select_cases(_args(cases="213,051," + full[61].id[:10]))
    assert [c.index for c in picked] == [213, 51, 61]
    # from the full set even with --fast (its first part), and combined with --lang
    assert [c.index for c in run.select_cases(_args(fast=True, cases="213"))] == [213]
    go = [c.index for c in full if c.lang == "go"][:2]
    others = [c.index for c in full if c.lang != "go"][:1]
    sel = run.select_cases(_args(cases=",".join(f"{i:03d}" for i in go + others), lang="go"))
    assert [c.index for c in sel] == go


@pytest.mark.parametrize("spec, why", [("300", "--cases 300: no case"), ("051-c-", "--cases 051-c-: no case"),
                                       (",", "names no case")])
def test_cases_that_name_no_case_are_one_clear_error(spec, why):
    with pytest.raises(ValueError, match=why):
        run.select_cases(_args(cases=spec))
