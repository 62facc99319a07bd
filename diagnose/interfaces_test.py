"""Interfaces are declared: no attribute of the project's own types is read
with a fallback.  `getattr(obj, "name", default)` and `hasattr(obj, "name")`
in diagnose/ and cli/ hide a missing attribute (a field nobody set, a
protocol member a chooser lacks) behind a default; reading the declared
attribute fails loudly instead.  Foreign objects need no fallback either:
an argparse namespace's options are declared by its parser, numpy scalars
are np.generic."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PRODUCT = sorted(p for d in ("diagnose", "cli") for p in (ROOT / d).rglob("*.py")
                 if not p.name.endswith("_test.py"))


def fallback_reads(source, name="<src>"):
    """(line, call) of every getattr with a default and every hasattr."""
    out = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
                (node.func.id == "getattr" and len(node.args) == 3) or node.func.id == "hasattr"):
            out.append((node.lineno, ast.unparse(node)))
    return out


def test_the_scan_covers_the_product_code():
    names = {p.relative_to(ROOT).as_posix() for p in PRODUCT}
    assert {"diagnose/algorithm.py", "diagnose/slice.py", "cli/cmd_debug.py", "cli/repl/context.py"} <= names


@pytest.mark.parametrize("path", PRODUCT, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_attribute_is_read_with_a_fallback(path):
    assert fallback_reads(path.read_text(), str(path)) == []


def test_the_scan_sees_a_fallback():
    src = "x = getattr(g, 'roles', None)\ny = getattr(g, 'roles')\nif hasattr(c, 'auto_twin'):\n    pass\n"
    assert [line for line, _ in fallback_reads(src)] == [1, 3]
