"""No upward import between layers and no import cycle between modules.

The layer table and the checker are in tests/support/layers.py; the product
sources are parsed with `ast`, never imported.
"""
from pathlib import Path

import pytest

from support.layers import PACKAGES, check_layers, layer_of, product_sources

ROOT = Path(__file__).resolve().parent.parent


def test_product_has_no_upward_import_and_no_cycle():
    sources = product_sources(ROOT)
    # the checker must see the tree it is meant to guard
    assert "argus.diagnose.report" in sources and "argus.cli.main" in sources
    report = check_layers(sources)
    assert report.imports, "no argus import found: the parser is broken"
    assert not report.upward and not report.cycles and not report.unexplained_local, \
        "\n" + report.describe()


def test_checker_reports_an_upward_import_and_a_cycle():
    sources = {
        "argus.tracer": ("tracer/__init__.py", ""),
        "argus.tracer.reader": ("tracer/reader.py",
                                "import os\n"
                                "def f():\n"
                                "    # local for start-up time\n"
                                "    from argus.cli.main import run\n"),
        "argus.diagnose": ("diagnose/__init__.py", "from .report import render\n"),
        "argus.diagnose.report": ("diagnose/report.py",
                                  "from argus.tracer import reader\n"
                                  "def g():\n"
                                  "    from . import hangs\n"),  # no comment
        "argus.diagnose.hangs": ("diagnose/hangs.py",
                                 "import argus.diagnose.report as report\n"),
        "argus.cli.main": ("cli/main.py", "import json\n"),
    }
    report = check_layers(sources)
    assert [(i.where(), i.target, i.local) for i in report.upward] == [
        ("tracer/reader.py:4", "argus.cli.main", True)]
    assert report.cycles == [["argus.diagnose.hangs", "argus.diagnose.report"]] or \
        report.cycles == [["argus.diagnose.report", "argus.diagnose.hangs"]]
    text = report.describe()
    assert "upward import tracer/reader.py:4" in text
    assert [i.where() for i in report.unexplained_local] == ["diagnose/report.py:3"]
    assert "import cycle: argus.diagnose." in text
    # downward and same-layer imports pass; the relative imports resolved
    edges = {(i.source, i.target) for i in report.imports}
    assert ("argus.diagnose", "argus.diagnose.report") in edges
    assert ("argus.diagnose.report", "argus.tracer.reader") in edges
    assert ("argus.diagnose.hangs", "argus.diagnose.report") in edges
    assert len(report.imports) == 5


def test_layer_table_covers_every_package():
    for module in ("argus", "argus.tracer.schema", "argus.graphbuild.graph",
                   "argus.diagnose.report", "argus.debugger.base",
                   "argus.scripts.lldb.generate", "argus.cli.repl.app",
                   "argus.hooks.hookspec"):
        layer_of(module)
    assert layer_of("argus.cli.repl.app")[0] == "argus.cli"
    assert layer_of("argus.tracer")[1] < layer_of("argus.diagnose")[1] \
        < layer_of("argus.cli")[1]
    assert layer_of("argus.tracer")[1] < layer_of("argus.hooks")[1] \
        < layer_of("argus.cli")[1]


def test_layer_packages_are_the_wheel_packages():
    # the checker reads the directories pyproject.toml maps, no fewer: a
    # package missing here would never be checked
    tomllib = pytest.importorskip("tomllib")
    with open(ROOT / "pyproject.toml", "rb") as f:
        mapped = tomllib.load(f)["tool"]["scikit-build"]["wheel"]["packages"]
    assert {k.replace("/", "."): v for k, v in mapped.items()} == PACKAGES
