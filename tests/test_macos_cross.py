"""The macOS build: scripts/build-macos.sh cross-compiles and links argusd
(with the kdebug event source), libargus_core and libargus-static (the
recorder of `argus instrument`ed dylibs) for arm64 and x86_64 with `zig cc`;
the outputs must be Mach-O files for the right CPU, argusd must really import
the kdebug interface (sysctl, the mach timebase), and an instrumented dylib
plus the recorder must link into a program with zig's Mach-O linker.

Runs when the ziglang package is importable (scripts/setup.sh installs it);
in CI its absence is a failure, not a skip."""
import os
import shutil
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
@pytest.mark.parametrize("name,filetype", [("argusd", MH_EXECUTE), ("libargus_core.dylib", MH_DYLIB),
                                           ("libargus-static.dylib", MH_DYLIB)])
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


@pytest.mark.parametrize("arch", sorted(CPU_TYPE))
def test_static_recorder_exports_and_clock(macos_build, arch):
    """libargus-static.dylib exports the trampolines' entry and nothing else
    of its own; it stamps records with CLOCK_UPTIME_RAW through
    clock_gettime_nsec_np (mach absolute time in ns: the kdebug records'
    clock) and names threads as the kdebug decoder does (pthread_threadid_np,
    pthread_main_np); rings are files it maps in ARGUS_URING_DIR."""
    lief = pytest.importorskip("lief")
    lief.logging.disable()
    b = lief.parse(str(macos_build / arch / "libargus-static.dylib"))
    ids = [c.name for c in b.commands if c.command == lief.MachO.LoadCommand.TYPE.ID_DYLIB]
    assert ids == ["@loader_path/libargus-static.dylib"]    # the name `argus instrument` loads it by
    own = {s.name for s in b.exported_symbols} - {"__mh_dylib_header", "___dso_handle"}
    assert own == {"_argus_static_enter"}
    imported = {s.name.split("$")[0] for s in b.imported_symbols}
    assert {"_clock_gettime_nsec_np", "_pthread_threadid_np", "_pthread_main_np", "_mmap", "_ftruncate",
            "_getenv"} <= imported, sorted(imported)
    assert "_clock_gettime" not in imported and "_syscall" not in imported
    # every clock read asks for clock id 8, CLOCK_UPTIME_RAW (<time.h> on macOS)
    objdump = shutil.which("llvm-objdump")
    if objdump is None:
        if IN_CI:
            pytest.fail("CI must have llvm-objdump (scripts/setup.sh installs llvm)")
        return
    lines = subprocess.run([objdump, "--macho", "-d", str(macos_build / arch / "libargus-static.dylib")],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    calls = [i for i, line in enumerate(lines) if "symbol stub for: _clock_gettime_nsec_np" in line]
    assert calls
    first_arg = "mov\tw0, #8" if arch == "aarch64" else "movl\t$8, %edi"
    assert all(any(first_arg in line for line in lines[i - 3:i]) for i in calls), [lines[i - 3:i + 1] for i in calls]


LIB_C = """
static int table[64];
int work(int x) { table[x & 63] += x; return table[(x + 1) & 63] * 3; }
"""
MAIN_C = """
int work(int);
void argus_static_enter(unsigned, unsigned, unsigned long long, unsigned long long);
int main(void) { argus_static_enter(0, 0, 0, 0); return work(3); }
"""


@pytest.mark.parametrize("arch", sorted(CPU_TYPE))
def test_instrumented_dylib_links_with_the_recorder(macos_build, arch, tmp_path):
    """A dylib instrumented by `argus instrument` and the built recorder are
    inputs zig's Mach-O linker accepts: a program links against both, takes
    `work` from the copy and `argus_static_enter` from the recorder.  (That
    dyld binds the copy's slot is checked as data in tests/test_instrument.py;
    running needs a Mac.)"""
    (tmp_path / "m.c").write_text(LIB_C)
    (tmp_path / "main.c").write_text(MAIN_C)
    lib, copy = tmp_path / "libm.dylib", tmp_path / "out" / "libm.dylib"
    copy.parent.mkdir()
    zig = [sys.executable, "-m", "ziglang", "cc", "-target", f"{arch}-macos"]
    subprocess.run(zig + ["-shared", "-O2", "-install_name", "@rpath/libm.dylib", "-o", str(lib),
                          str(tmp_path / "m.c")], check=True)
    spec = tmp_path / "spec.json"
    spec.write_text('{"library": "libm.dylib", "hooks": [{"symbol": "work", "enter": "callback_begin"}]}')
    proc = subprocess.run([sys.executable, "-m", "argus.cli", "instrument", str(lib), "-o", str(copy),
                           "--hooks", str(spec)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    recorder = copy.parent / "libargus-static.dylib"      # where the copy looks for it (@loader_path)
    recorder.write_bytes((macos_build / arch / "libargus-static.dylib").read_bytes())
    prog = tmp_path / "prog"
    subprocess.run(zig + ["-o", str(prog), str(tmp_path / "main.c"), str(copy), str(recorder)], check=True)
    lief = pytest.importorskip("lief")
    lief.logging.disable()
    b = lief.parse(str(prog))
    imports = {(x.symbol.name, x.library.name) for x in b.bindings if x.has_symbol and x.has_library}
    assert ("_work", "@rpath/libm.dylib") in imports
    assert ("_argus_static_enter", "@loader_path/libargus-static.dylib") in imports
