"""The macOS build: scripts/build-macos.sh cross-compiles and links argusd
(with the kdebug event source) and libargus_core for arm64 and x86_64 with
`zig cc`; the outputs must be Mach-O files for the right CPU, and argusd must
really import the kdebug interface (sysctl, the mach timebase).

Runs when the ziglang package is importable (scripts/setup.sh installs it);
in CI its absence is a failure, not a skip."""
import os
import struct
import subprocess
import sys

import pytest

IN_CI = os.environ.get("CI") == "true"
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MH_MAGIC_64 = 0xFEEDFACF
CPU_TYPE = {"aarch64": 0x0100000C, "x86_64": 0x01000007}   # CPU_TYPE_ARM64, CPU_TYPE_X86_64
MH_EXECUTE, MH_DYLIB = 2, 6


def _have_zig():
    try:
        import ziglang  # noqa: F401
        return True
    except ImportError:
        return False


@pytest.fixture(scope="module")
def macos_build(tmp_path_factory):
    if not _have_zig():
        if IN_CI:
            pytest.fail("CI must have ziglang (scripts/setup.sh installs it)")
        pytest.skip("ziglang is not installed: pip install ziglang")
    out = tmp_path_factory.mktemp("macos")
    proc = subprocess.run([os.path.join(REPO, "scripts", "build-macos.sh"), str(out)], cwd=REPO,
                          env=dict(os.environ, PYTHON=sys.executable), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    return out


def _macho_header(path):
    with open(path, "rb") as f:
        magic, cputype, _subtype, filetype = struct.unpack("<IiiI", f.read(16))
    return magic, cputype & 0xFFFFFFFF, filetype


@pytest.mark.parametrize("arch", sorted(CPU_TYPE))
@pytest.mark.parametrize("name,filetype", [("argusd", MH_EXECUTE), ("libargus_core.dylib", MH_DYLIB)])
def test_outputs_are_macho_for_the_arch(macos_build, arch, name, filetype):
    path = macos_build / arch / name
    assert path.exists(), f"{path} was not built"
    magic, cputype, ft = _macho_header(path)
    assert magic == MH_MAGIC_64, hex(magic)
    assert cputype == CPU_TYPE[arch], hex(cputype)
    assert ft == filetype


@pytest.mark.parametrize("arch", sorted(CPU_TYPE))
def test_argusd_links_the_kdebug_source(macos_build, arch):
    lief = pytest.importorskip("lief")
    binary = lief.parse(str(macos_build / arch / "argusd"))
    imported = {s.name for s in binary.imported_symbols}
    # sysctl(CTL_KERN, KERN_KDEBUG, ...) and the mach timebase: the kdebug reader is in
    assert {"_sysctl", "_mach_timebase_info", "_mach_absolute_time"} <= imported, sorted(imported)
    assert any(lib.name.endswith("libSystem.B.dylib") for lib in binary.libraries)
    core = lief.parse(str(macos_build / arch / "libargus_core.dylib"))   # keep it alive while iterating
    exported = {s.name for s in core.exported_symbols}
    assert {"_argus_kdebug_import", "_argus_rb_create", "_argus_decode_file"} <= exported


MH_OBJECT = 1


@pytest.mark.parametrize("arch", sorted(CPU_TYPE))
def test_trampoline_engine_objects_for_the_arch(macos_build, arch):
    # dylib-instrument's portable engine: every object of the archive is a
    # Mach-O object for the arch, and the relocator's entry point is in it
    objs = sorted((macos_build / arch / "tramp").glob("*.o"))
    assert len(objs) == 8 and (macos_build / arch / "libargus_tramp_engine.a").exists()
    for o in objs:
        magic, cputype, ft = _macho_header(o)
        assert (magic, cputype, ft) == (MH_MAGIC_64, CPU_TYPE[arch], MH_OBJECT), o
    lief = pytest.importorskip("lief")
    reloc = lief.parse(str(macos_build / arch / "tramp" / "relocator.o"))
    assert "_argus_relocate" in {s.name for s in reloc.symbols}
