"""Packaging on a fresh clone: the editable install serves the sources in
place, and the wheel ships the product only.

Each test clones the committed tree (HEAD of this checkout) into a tmp dir and
builds it with the real toolchain (pip, scikit-build-core, CMake, clang for
the BPF object) into a fresh venv: a minute or so, no root needed.  The venv
sees the system site-packages (numpy, scikit-build-core, ...; setup.sh
installed them) and the project's own dependencies are not re-resolved
(--no-deps --no-build-isolation), so nothing is downloaded.

  - editable (`pip install -e .`): after one install, an edit to a Python file
    under cli/, graphbuild/, diagnose/, debugger/, tracer/ and scripts/lldb/
    of the clone, and a new module, are live in the venv's python and its
    `argus` command with no reinstall; the native parts CMake built are still
    found (argus.NATIVE_DIR).
  - wheel (`pip wheel .`, then `pip install` of it): the test scaffolding
    (tests/support: crafted, kdebug_gen, the reference engine) and the unit
    tests (*_test.py) are not in it, nor the C sources beside the Python, nor
    any test program (argus/_native/ holds the product's native parts, no
    more: the tests build their programs, tests/support/programs.py);
    argus.X imports from the installed copy, argus.graphbuild.crafted fails.

The venv sees the system site-packages as a plain path, so that an editable
install of this checkout there (its import hook runs from a .pth file) does
not answer the venv's `import argus`.
"""
import os
import shutil
import subprocess
import sys
import uuid
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IN_CI = os.environ.get("CI") == "true"

# what must never ship, as wheel paths (argus/...)
SCAFFOLDING = ("crafted.py", "kdebug_gen.py", "segments.py", "edges.py")
NATIVE = ("libargus_core.so", "libargus_graph.so", "argusd", "argus-demo-hang")
# argus/_native/ of the wheel, exactly: the product (a new native part is added
# here on purpose; a test program never is)
PRODUCT_NATIVE = {*NATIVE, "libargus-agent.so", "libargus-static.so", "libargus-static-gen.so",
                  "include/argus_event.h", "include/argus_decode.h"}


def _test_program_names():
    """The executables CMake builds for the tests (every add_executable of
    tests/programs/ and dylib-instrument/ but the shipped demo)."""
    import re
    names = set()
    for cmake in ("tests/programs/CMakeLists.txt", "dylib-instrument/CMakeLists.txt"):
        with open(os.path.join(ROOT, cmake)) as f:
            names |= set(re.findall(r"add_executable\(\s*([\w-]+)", f.read()))
    return names - {"argus-demo-hang"}


def _require_toolchain():
    missing = [tool for tool in ("git", "cmake") if shutil.which(tool) is None]
    try:
        import scikit_build_core  # noqa: F401
    except ImportError:
        missing.append("scikit-build-core")
    if not os.path.isdir(os.path.join(ROOT, ".git")) and not os.path.isfile(os.path.join(ROOT, ".git")):
        missing.append("a git checkout")
    if missing:
        msg = f"needs {', '.join(missing)} (scripts/setup.sh installs them)"
        if IN_CI:
            pytest.fail(msg)
        pytest.skip(msg)


def _run(cmd, cwd=None, timeout=900, **kw):
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, **kw)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stderr[-4000:]}{proc.stdout[-2000:]}"
    return proc.stdout


def _fresh_clone_and_venv(tmp_path):
    _require_toolchain()
    clone, venv = tmp_path / "argus", tmp_path / "venv"
    _run(["git", "clone", "-q", ROOT, str(clone)])
    _run([sys.executable, "-m", "venv", str(venv)])
    # the system site-packages (numpy, scikit-build-core, ...) as plain paths:
    # their .pth files do not run, so an editable argus there stays out
    import site
    (site_dir,) = (venv / "lib").glob("python*/site-packages")
    (site_dir / "system-site.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return clone, venv / "bin"


def _py(bindir, code, cwd):
    # cwd outside the clone: the import must come from the install, not from ''
    return _run([str(bindir / "python"), "-c", code], cwd=cwd).strip()


def _edit(path, old, new):
    text = path.read_text()
    assert old in text, f"{path}: {old!r} not found (the test edits it to prove the change is live)"
    path.write_text(text.replace(old, new, 1))


def test_editable_install_serves_python_edits_live(tmp_path):
    clone, bindir = _fresh_clone_and_venv(tmp_path)
    _run([str(bindir / "pip"), "install", "-q", "--no-deps", "--no-build-isolation", "-e", "."], cwd=clone)
    out = tmp_path / "elsewhere"
    out.mkdir()

    where = _py(bindir, "import argus.cli.main as m, argus.diagnose.report as r, argus.scripts.lldb.generate as g,"
                        " argus.tracer.schema as s; print(m.__file__, r.__file__, g.__file__, s.__file__)", out).split()
    assert where == [str(clone / "cli/main.py"), str(clone / "diagnose/report.py"),
                     str(clone / "scripts/lldb/generate.py"), str(clone / "tracer/schema.py")]

    # the native parts are CMake's, found at runtime through argus.NATIVE_DIR
    native_dir = _py(bindir, "from argus.tracer import native; from argus.graphbuild import native_core;"
                             " native.lib(); native_core.lib(); print(native.native_dir())", out)
    for name in NATIVE:
        assert os.path.exists(os.path.join(native_dir, name)), f"{name} missing from {native_dir}"

    token = uuid.uuid4().hex
    _edit(clone / "cli/main.py", 'prog="argus",', f'prog="argus", epilog="live-edit {token}",')
    edited = {"argus.graphbuild.summary": "graphbuild/summary.py", "argus.diagnose.report": "diagnose/report.py",
              "argus.debugger.base": "debugger/base.py", "argus.tracer.syscalls": "tracer/syscalls.py",
              "argus.scripts.lldb.generate": "scripts/lldb/generate.py"}
    for module, path in edited.items():
        with open(clone / path, "a") as f:
            f.write(f"\n\ndef live_edit_probe():\n    return '{module} {token}'\n")
    (clone / "diagnose/live_edit_new.py").write_text(f"PROBE = 'new module {token}'\n")

    help_text = _run([str(bindir / "argus"), "--help"], cwd=out)
    assert f"live-edit {token}" in help_text
    seen = _py(bindir, "import importlib; from argus.diagnose import live_edit_new;"
                       f" print('|'.join(importlib.import_module(m).live_edit_probe() for m in {sorted(edited)!r}),"
                       " '|', live_edit_new.PROBE, sep='')", out)
    assert seen.split("|") == [f"{m} {token}" for m in sorted(edited)] + [f"new module {token}"]



def test_wheel_ships_the_product_without_test_scaffolding(tmp_path):
    clone, bindir = _fresh_clone_and_venv(tmp_path)
    dist = tmp_path / "dist"
    _run([str(bindir / "pip"), "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist), "."], cwd=clone)
    (wheel,) = dist.glob("argus-*.whl")
    names = zipfile.ZipFile(wheel).namelist()

    shipped = [n for n in names if n.startswith("argus/")]
    assert [n for n in shipped if os.path.basename(n) in SCAFFOLDING] == []
    assert [n for n in shipped if n.endswith("_test.py")] == []
    assert [n for n in shipped if n.endswith((".c", ".in", "CMakeLists.txt"))] == []
    assert not any(n.startswith(("argus/tests/", "support/", "tests/")) for n in names)
    for needed in ("argus/__init__.py", "argus/cli/main.py", "argus/tracer/schema.py", "argus/graphbuild/builder.py",
                   "argus/diagnose/algorithm.py", "argus/debugger/base.py", "argus/scripts/lldb/generate.py",
                   "argus/scripts/lldb/step_trace.py", "argus/hooks/hookspec.py", "argus/hooks/pthread.json",
                   *(f"argus/_native/{n}" for n in NATIVE)):
        assert needed in names, needed
    # no test program: the tests build theirs (tests/support/programs.py)
    native = {n[len("argus/_native/"):] for n in names if n.startswith("argus/_native/") and not n.endswith("/")}
    programs = _test_program_names()
    assert "argus-mutex-holder" in programs and "argus-hook-test" in programs   # the parser sees them
    assert sorted(native & programs) == []
    assert native == PRODUCT_NATIVE, f"not the product: {sorted(native - PRODUCT_NATIVE)}, " \
                                     f"missing: {sorted(PRODUCT_NATIVE - native)}"

    # installed: the product imports from site-packages, the scaffolding does not import at all
    _run([str(bindir / "pip"), "install", "-q", "--no-deps", "--ignore-installed", str(wheel)], cwd=tmp_path)
    out = tmp_path / "elsewhere"
    out.mkdir()
    site = _py(bindir, "import argus.cli.main as m, argus.scripts.lldb.generate as g; print(m.__file__, g.__file__)", out)
    assert str(clone) not in site and "site-packages" in site
    for module in ("argus.graphbuild.crafted", "argus.tracer.kdebug_gen", "argus.graphbuild.segments",
                   "argus.graphbuild.edges", "support"):
        proc = subprocess.run([str(bindir / "python"), "-c", f"import {module}"], cwd=out, capture_output=True, text=True)
        assert proc.returncode != 0 and "ModuleNotFoundError" in proc.stderr, f"{module} is importable"


PRODUCT_DIRS = ("tracer", "graphbuild", "diagnose", "cli", "debugger", os.path.join("scripts", "lldb"),
                os.path.join("dylib-instrument", "hooks"))


def test_product_code_never_imports_test_scaffolding():
    """The direction is one way: tests import the product, never the reverse
    (a product import of tests/support would work from a checkout and fail
    from the wheel)."""
    import ast

    offenders = []
    for top in PRODUCT_DIRS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if not name.endswith(".py") or name.endswith("_test.py"):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    tree = ast.parse(f.read(), path)
                for node in ast.walk(tree):
                    modules = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                        [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                    for module in modules:
                        if module.split(".")[0] in ("support", "tests", "conftest"):
                            offenders.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}: {module}")
    assert offenders == []
