"""Static tools resolve `argus.X` in the checkout with no manual step.

pyproject.toml maps argus.X to X/ (argus.hooks to dylib-instrument/hooks/);
only the editable install's import hook knows that, and jedi, pyright and
structure drawings do not run it.  The checkout's argus/ is a namespace of
relative links, one per mapped package (argus/diagnose -> ../diagnose), so
a tool that puts the checkout on its search path (jedi and pyright do by
default) finds argus.diagnose.algorithm in diagnose/algorithm.py.  The links
point at siblings, never at an ancestor, so walking the tree has no loop;
argus/ has no __init__.py, so at run time the installed package (a regular
one) still wins over it.  Its __init__.pyi declares the generated package
root's names (cli/argus_init.py.in) and makes argus/ a stub package, which
pyright prefers to an installed argus.
"""
import ast
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINKS = os.path.join(ROOT, "argus")


def _mapping():
    tomllib = pytest.importorskip("tomllib")
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["tool"]["scikit-build"]["wheel"]["packages"]


def test_links_are_the_package_mapping():
    mapping = _mapping()
    found = {}
    for dirpath, dirnames, filenames in os.walk(LINKS):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                found[os.path.relpath(path, ROOT)] = path
            elif not os.path.isdir(path) and path != os.path.join(LINKS, "__init__.pyi"):
                pytest.fail(f"{os.path.relpath(path, ROOT)}: argus/ holds links only (an __init__.py here "
                            f"would shadow the installed argus when run from the checkout)")
    assert sorted(found) == sorted(mapping), "argus/ must link exactly the packages pyproject.toml maps"
    for package, directory in mapping.items():
        link = found[package]
        target = os.readlink(link)
        assert not os.path.isabs(target), f"{package} -> {target}: relative, so any clone resolves it"
        assert os.path.realpath(link) == os.path.join(ROOT, directory), f"{package} -> {target}"


def _public_names(tree):
    names = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        names |= {t.id for t in targets if isinstance(t, ast.Name)
                  and (t.id.startswith("__") or not t.id.startswith("_"))}   # _os is private
    return names


def test_root_stub_declares_the_generated_root():
    with open(os.path.join(ROOT, "cli", "argus_init.py.in")) as f:
        generated = _public_names(ast.parse(f.read()))
    with open(os.path.join(LINKS, "__init__.pyi")) as f:
        stub = _public_names(ast.parse(f.read()))
    assert "NATIVE_DIR" in generated and stub == generated


def test_links_are_committed():
    if not os.path.exists(os.path.join(ROOT, ".git")):
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "ls-files", "-s", "argus"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    modes = {line.split("\t")[1]: line.split()[0] for line in out.splitlines()}
    assert modes.pop("argus/__init__.pyi", None) == "100644"
    assert modes and set(modes) == set(_mapping()), modes
    assert set(modes.values()) == {"120000"}, modes   # symlinks, as a fresh clone gets them


@pytest.mark.parametrize("source,line,column,target", [
    ("import argus.diagnose.algorithm\n", 1, 25, "diagnose/algorithm.py"),
    ("from argus.hooks import hookspec\n", 1, 28, "dylib-instrument/hooks/hookspec.py"),
    ("from argus.scripts.lldb import generate\n", 1, 33, "scripts/lldb/generate.py"),
    ("import argus\nargus.NATIVE_DIR\n", 2, 8, "argus/__init__.pyi"),
])
def test_jedi_resolves_argus_imports_in_the_checkout(tmp_path, source, line, column, target):
    jedi = pytest.importorskip("jedi")
    # an environment without the installed argus: only the checkout can answer
    env = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    project = jedi.Project(ROOT, environment_path=str(env))
    script = jedi.Script(source, path=os.path.join(ROOT, "x.py"), project=project)
    found = [os.path.realpath(str(n.module_path)) for n in script.goto(line, column, follow_imports=True)]
    assert found == [os.path.join(ROOT, target)]
