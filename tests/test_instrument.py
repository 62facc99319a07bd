"""`argus instrument LIB -o OUT`: statically instrumented copies of real
libraries.  ELF: a test library built here with the system compiler and the
system's libglib, rewritten, loaded by real programs (LD_LIBRARY_PATH) under a
real daemon; their records are read back with `argus events --json`.
Mach-O: dylibs cross-built with zig for arm64 and x86_64, rewritten, read
back with LIEF and llvm-objdump (the recorder's LC_LOAD_DYLIB and the slot's
bind) and disassembled with capstone (they cannot run here)."""
import json
import os
import platform
import shutil
import stat
import subprocess
import sys

import pytest

from conftest import require_tracing
from support.programs import program

from argus.hooks import hookspec

# the ELF libraries built here run: x86_64 (arm64 ELF and the dylibs are checked as data)
x86_64_only = pytest.mark.skipif(platform.machine() != "x86_64", reason="runs x86_64 trampolines")

LIB_C = r"""
#include <stdio.h>
int counter;
/* prologue: push rbx; mov rax, [rip + counter@GOT] (RIP-relative, moved) */
__attribute__((noinline)) int work(int x) { counter += x; if (x > 100) printf("big %d\n", x); return x * 3; }
__attribute__((noinline)) void *ptr(void *p) { return (char *)p + counter; }
__attribute__((noinline)) void tiny(void) { }   /* a lone ret: too short to patch */
"""

MAIN_C = r"""
#include <stdio.h>
#include <unistd.h>
int work(int); void *ptr(void *); void tiny(void);
int main(void)
{
	int sum = 0;
	for (int i = 0; i < 5; i++)
		sum += work(i);
	sum += work(200);
	tiny();
	void *p = ptr((void *)0x1000);
	printf("{\"pid\": %d, \"sum\": %d, \"ptr\": %lu, \"work\": %lu, \"ptr_fn\": %lu}\n",
	       (int)getpid(), sum, (unsigned long)p, (unsigned long)work, (unsigned long)ptr);
	return 0;
}
"""

SPEC = {"library": "libargustest.so",
        "hooks": [{"symbol": "work", "enter": "callback_begin"},
                  {"symbol": "tiny", "enter": "enqueue"},
                  {"symbol": "ptr", "enter": "enqueue", "return": "probe_return"}]}


def _argus(*args, env=None):
    return subprocess.run([sys.executable, "-m", "argus.cli", *args], capture_output=True, text=True,
                          timeout=120, env=env)


@pytest.fixture
def built(tmp_path):
    cc = shutil.which("cc")
    if not cc:
        pytest.fail("no C compiler")
    (tmp_path / "lib.c").write_text(LIB_C)
    (tmp_path / "main.c").write_text(MAIN_C)
    subprocess.run([cc, "-O2", "-fPIC", "-shared", "-Wl,-soname,libargustest.so", "-o",
                    str(tmp_path / "libargustest.so"), str(tmp_path / "lib.c")], check=True)
    subprocess.run([cc, "-O2", "-o", str(tmp_path / "main"), str(tmp_path / "main.c"),
                    "-L", str(tmp_path), "-largustest"], check=True)
    (tmp_path / "spec.json").write_text(json.dumps(SPEC))
    (tmp_path / "out").mkdir()
    os.chmod(tmp_path / "libargustest.so", 0o750)
    return tmp_path


def _instrument(built):
    return _argus("instrument", str(built / "libargustest.so"), "-o", str(built / "out" / "libargustest.so"),
                  "--hooks", str(built / "spec.json"))


def _main(built, libdir, **env):
    proc = subprocess.run([str(built / "main")], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, LD_LIBRARY_PATH=str(libdir), **env))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@x86_64_only
def test_elf_rewrite_structure(built):
    import lief
    proc = _instrument(built)
    assert proc.returncode == 0, proc.stderr
    assert "2 hooks placed" in proc.stdout
    # the lone ret is refused (one line); ptr's return is recorded too (a return stub, no warning)
    warnings = proc.stderr.splitlines()
    assert len(warnings) == 1 and warnings[0].startswith("argus instrument: tiny: hook skipped: "), warnings

    out = built / "out" / "libargustest.so"
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o750        # the input's mode
    new = lief.ELF.parse(str(out))
    added = [s for s in new.segments if s.type == lief.ELF.Segment.TYPE.LOAD
             and s.has(lief.ELF.Segment.FLAGS.X) and not s.sections]
    assert len(added) == 1
    tramp = added[0]
    for name in ("work", "ptr"):
        va = new.get_dynamic_symbol(name).value
        entry = bytes(new.get_content_from_virtual_address(va, 5))
        assert entry[0] == 0xE9
        target = va + 5 + int.from_bytes(entry[1:], "little", signed=True)
        assert tramp.virtual_address <= target < tramp.virtual_address + tramp.virtual_size
    tiny = new.get_dynamic_symbol("tiny").value
    assert bytes(new.get_content_from_virtual_address(tiny, 1)) == b"\xc3"    # untouched: ret
    needed = [e.name for e in new.dynamic_entries if e.tag == lief.ELF.DynamicEntry.TAG.NEEDED]
    assert needed[0].endswith("/libargus-static.so")
    assert any(r.has_symbol and r.symbol.name == "argus_static_enter" for r in new.dynamic_relocations)

    # without a daemon the copy behaves like the original
    plain, inst = _main(built, built), _main(built, built / "out")
    assert (inst["sum"], inst["ptr"]) == (plain["sum"], plain["ptr"]) == (630, 0x1000 + 210)


def test_bad_input_is_one_line(built, tmp_path):
    cases = []
    (tmp_path / "text").write_text("not a library\n")
    cases.append(_argus("instrument", str(tmp_path / "text"), "-o", str(tmp_path / "o1")))
    cases.append(_argus("instrument", str(tmp_path / "missing.so"), "-o", str(tmp_path / "o2")))
    spec = dict(SPEC, hooks=[{"symbol": "no_such_function", "enter": "enqueue"}])
    (tmp_path / "bad.json").write_text(json.dumps(spec))
    cases.append(_argus("instrument", str(built / "libargustest.so"), "-o", str(tmp_path / "o3"),
                        "--hooks", str(tmp_path / "bad.json")))
    cases.append(_argus("instrument", str(built / "main"), "-o", str(tmp_path / "o4"),
                        "--hooks", str(built / "spec.json")))
    for proc in cases:
        assert proc.returncode == 1, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "no function no_such_function" in cases[2].stderr
    assert not any(os.path.exists(tmp_path / f"o{i}") for i in range(1, 5))


def _events(argus_cli, pid):
    argus_cli.wait_drained()
    argus_cli.stop()
    out = argus_cli.run("events", "--buffer", argus_cli.buffer, "--json", "--pid", str(pid)).stdout
    return [json.loads(line) for line in out.splitlines()]


@x86_64_only
def test_elf_records_land_in_the_trace(built, argus_cli):
    require_tracing()
    assert _instrument(built).returncode == 0
    argus_cli.start(size="64M")
    rings = os.path.join(argus_cli.env["ARGUS_RUN_DIR"], "urings")
    ids = _main(built, built / "out", ARGUS_URING_DIR=rings)
    events = [e for e in _events(argus_cli, ids["pid"]) if e["cpu"] == 0xFFFF]
    begins = [e for e in events if e["type"] == "callback_begin"]
    assert [e["obj"] for e in begins] == [0, 1, 2, 3, 4, 200]     # obj = the first argument
    assert {e["fn"] for e in begins} == {ids["work"]} and {e["probe_id"] for e in begins} == {0}
    enq = [e for e in events if e["type"] == "enqueue"]
    assert [(e["obj"], e["fn"], e["probe_id"]) for e in enq] == [(0x1000, ids["ptr_fn"], 2)]
    ret = [e for e in events if e["type"] == "probe_return"]      # obj = the result, after the entry
    assert [(e["obj"], e["fn"], e["probe_id"]) for e in ret] == [(ids["ptr"], ids["ptr_fn"], 2)]
    assert ret[0]["ts_ns"] >= enq[0]["ts_ns"]
    assert all(e["tid"] == ids["pid"] for e in events)
    assert os.listdir(rings) == []


GLIB_SCRIPT = """
import ctypes, json, os
g = ctypes.CDLL('libglib-2.0.so.0')
ctx = g.g_main_context_new
ctx.restype = ctypes.c_void_p
c = ctx()
g.g_main_context_wakeup(ctypes.c_void_p(c))
for _ in range(20):
    g.g_main_context_iteration(None, 0)
print(json.dumps({"pid": os.getpid(), "ctx": c}))
"""

# A GLib main loop: 30 timeouts dispatched by g_main_loop_run, then quit.
GLIB_LOOP = """
import ctypes, json, os
g = ctypes.CDLL('libglib-2.0.so.0')
g.g_main_loop_new.restype = ctypes.c_void_p
g.g_main_context_default.restype = ctypes.c_void_p
loop = ctypes.c_void_p(g.g_main_loop_new(None, 0))
SOURCE_FUNC = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p)
ticks = []
def tick(_):
    ticks.append(1)
    if len(ticks) == 30:
        g.g_main_loop_quit(loop)
        return 0
    return 1
cb = SOURCE_FUNC(tick)
g.g_timeout_add(2, cb, None)
g.g_main_loop_run(loop)
print(json.dumps({"pid": os.getpid(), "ctx": g.g_main_context_default(), "ticks": len(ticks)}))
"""


def _glib_copy(tmp_path):
    src = "/usr/lib/x86_64-linux-gnu/libglib-2.0.so.0"
    if not os.path.exists(src):
        pytest.skip("libglib-2.0 is not installed")
    proc = _argus("instrument", src, "-o", str(tmp_path / "libglib-2.0.so.0"))
    assert proc.returncode == 0, proc.stderr
    return proc


@x86_64_only
def test_glib_instrumented_copy(tmp_path, argus_cli):
    """The system's libglib, rewritten with the shipped hook spec (the same
    data `argus run` uses), loaded by a real Python program."""
    require_tracing()
    proc = _glib_copy(tmp_path)
    # dispatch (entry and return) and wakeup; g_source_attach records its second argument: `argus run` only
    assert "2 hooks placed" in proc.stdout
    assert proc.stderr.strip() == "argus instrument: g_source_attach: its obj (argument 1) needs `argus run`; skipped"
    argus_cli.start(size="64M")
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path),
               ARGUS_URING_DIR=os.path.join(argus_cli.env["ARGUS_RUN_DIR"], "urings"))
    run = subprocess.run(["/usr/bin/python3", "-c", GLIB_SCRIPT], env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    ids = json.loads(run.stdout)
    events = _events(argus_cli, ids["pid"])
    assert [e["obj"] for e in events if e["type"] == "enqueue" and e["obj"] == ids["ctx"]]   # wakeup(ctx)
    assert len([e for e in events if e["type"] == "callback_begin"]) >= 20              # one per dispatch


@x86_64_only
def test_glib_copy_finds_the_daemon_alone(tmp_path, argus_cli):
    """`argus instrument` + LD_LIBRARY_PATH and nothing else: the copy finds
    the daemon's ring directory as `argus run` does (ARGUS_RUN_DIR, which
    points a user's environment at this test's private daemon; the default
    run directory otherwise), and records a GLib main loop's dispatches with
    their returns: as many callback_end as callback_begin, each pair on the
    main thread, begin before end."""
    require_tracing()
    _glib_copy(tmp_path)
    base = {k: v for k, v in os.environ.items() if not k.startswith("ARGUS_")}
    # no daemon behind the run directory: one line says why, the program runs as before
    quiet = subprocess.run(["/usr/bin/python3", "-c", GLIB_LOOP], capture_output=True, text=True, timeout=60,
                           env=dict(base, LD_LIBRARY_PATH=str(tmp_path), ARGUS_RUN_DIR=str(tmp_path / "none")))
    assert quiet.returncode == 0 and json.loads(quiet.stdout)["ticks"] == 30, quiet.stderr
    assert quiet.stderr.splitlines() == [
        f"argus: instrumented library not recording: {tmp_path / 'none' / 'urings'}: No such file or directory "
        "(no tracing daemon: start one with `argus start`, or set ARGUS_RUN_DIR to the run directory of the one "
        "to record into)"]
    argus_cli.start(size="64M")
    run = subprocess.run(["/usr/bin/python3", "-c", GLIB_LOOP], capture_output=True, text=True, timeout=60,
                         env=dict(base, LD_LIBRARY_PATH=str(tmp_path), ARGUS_RUN_DIR=argus_cli.env["ARGUS_RUN_DIR"]))
    assert run.returncode == 0 and run.stderr == "", run.stderr
    ids = json.loads(run.stdout)
    assert ids["ticks"] == 30
    events = [e for e in _events(argus_cli, ids["pid"]) if e["type"] in ("callback_begin", "callback_end")]
    begins = [e for e in events if e["type"] == "callback_begin"]
    ends = [e for e in events if e["type"] == "callback_end"]
    assert len(begins) >= 20 and len(ends) == len(begins), (len(begins), len(ends))
    assert {e["tid"] for e in events} == {ids["pid"]} and {e["obj"] for e in begins} == {ids["ctx"]}
    assert {e["fn"] for e in ends} == {e["fn"] for e in begins}           # g_main_context_dispatch
    depth = 0
    for e in events:                       # in time order: every end closes the begin before it
        depth += 1 if e["type"] == "callback_begin" else -1
        assert 0 <= depth <= 1, events
    assert depth == 0
    assert all(e["cpu"] == 0xFFFF for e in events)         # a ring record: no CPU (`argus events` prints "-")
    text = argus_cli.run("events", "--buffer", argus_cli.buffer, "--pid", str(ids["pid"]),
                         "--type", "callback_end").stdout.splitlines()
    assert text and all("[  -]" in line for line in text), text[:3]


# --- Mach-O: cross-built with zig, checked as data ---

MACHO_C = """
static int table[64];
int shared_table[4];                    /* exported: reached through the GOT, never relaxed to adr */
int work(int x) { table[x & 63] += x; return table[(x + 1) & 63] * 3; }
int *base(void) { return shared_table; }   /* first instruction PC-relative: adrp / lea [rip] */
void empty(void) {}
int *start = table;                     /* one dynamic relocation: a relocation table to add to */
"""
HOOKED = ("work", "base", "empty")


def _have_zig():
    try:
        import ziglang  # noqa: F401
        return True
    except ImportError:
        return False


def _pc_relative_targets(insn):
    """Absolute addresses an instruction's PC-relative operands resolve to."""
    import capstone
    out = []
    if insn.mnemonic in ("adrp", "adr", "b", "bl", "cbz", "cbnz") or insn.mnemonic.startswith("b."):
        out += [op.imm for op in insn.operands if op.type == capstone.CS_OP_IMM]
    elif insn._cs.arch == capstone.CS_ARCH_X86:
        from capstone import x86
        for op in insn.operands:
            if op.type == capstone.CS_OP_MEM and op.mem.base == x86.X86_REG_RIP:
                out.append(insn.address + insn.size + op.mem.disp)
    return out


def _check_trampolines(arm64, orig, new, address_of, tramp_va, code, stderr, orig_address_of=None):
    """Each hooked entry branches to its trampoline slot; the slot runs the
    original instructions the patch covered, with the same absolute
    PC-relative operands, then jumps back right after them.  Returns how
    many moved instructions had PC-relative operands."""
    import capstone
    if arm64:
        md = capstone.Cs(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)
        branch, patch_size, restored = "b", 4, ("add", "sp, sp, #0xa0")
    else:
        md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
        branch, patch_size, restored = "jmp", 5, ("pop", "rdi")
    md.detail = True
    checked_pc_relative = 0
    for n, name in enumerate(HOOKED):
        va = address_of(name)
        # the original instructions the patch covers, whole (decoded at their new address)
        ova = orig_address_of(name) if orig_address_of else va
        moved = []
        for insn in md.disasm(bytes(orig.get_content_from_virtual_address(ova, 32)), va):
            if sum(i.size for i in moved) >= patch_size or (moved and moved[-1].mnemonic == "ret"):
                break
            moved.append(insn)
        if sum(i.size for i in moved) < patch_size:      # x86_64 `empty` is a lone ret: refused, untouched
            assert f"argus instrument: {name}: hook skipped: " in stderr
            assert new.get_content_from_virtual_address(va, 1) == orig.get_content_from_virtual_address(ova, 1)
            continue
        entry = next(md.disasm(bytes(new.get_content_from_virtual_address(va, 8)), va))
        assert entry.mnemonic == branch and entry.operands[0].imm == tramp_va + n * 256
        # trampoline: save, call, restore, then the moved copies, then the jump back
        body = list(md.disasm(code[n * 256:(n + 1) * 256], tramp_va + n * 256))
        start = next(i for i, insn in enumerate(body) if (insn.mnemonic, insn.op_str) == restored) + 1
        copies = body[start:start + len(moved)]
        assert len(copies) == len(moved)
        for old, copy in zip(moved, copies):
            assert old.mnemonic == copy.mnemonic, (old, copy)
            assert _pc_relative_targets(old) == _pc_relative_targets(copy)   # same absolute operand
            checked_pc_relative += bool(_pc_relative_targets(old))
        if moved[-1].mnemonic != "ret":
            back = body[start + len(moved)]
            assert back.mnemonic == branch and back.operands[0].imm == va + sum(i.size for i in moved)
    return checked_pc_relative


def _need_zig():
    if not _have_zig():
        if os.environ.get("CI"):
            pytest.fail("CI must have ziglang (scripts/setup.sh installs it)")
        pytest.skip("ziglang is not installed")


@pytest.mark.parametrize("target", ["aarch64-macos", "x86_64-macos"])
def test_macho_dylib_rewrite(tmp_path, target):
    _need_zig()
    import lief
    lief.logging.disable()
    (tmp_path / "m.c").write_text(MACHO_C)
    lib = tmp_path / "libm.dylib"
    subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", target, "-shared", "-O2",
                    "-fomit-frame-pointer", "-install_name", "@rpath/libm.dylib", "-o", str(lib), str(tmp_path / "m.c")], check=True)
    spec = {"library": "libm.dylib", "hooks": [{"symbol": name, "enter": "enqueue"} for name in HOOKED]}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    out = tmp_path / "out.dylib"
    proc = _argus("instrument", str(lib), "-o", str(out), "--hooks", str(tmp_path / "spec.json"))
    assert proc.returncode == 0, proc.stderr

    fat_orig, fat_new = lief.MachO.parse(str(lib)), lief.MachO.parse(str(out))   # the binaries live in these
    orig, new = fat_orig.at(0), fat_new.at(0)
    tramp = new.get_segment("__ARGUS_TEXT")
    assert tramp is not None and tramp.init_protection == 5 and new.get_segment("__ARGUS_DATA") is not None
    arm64 = target.startswith("aarch64")
    code = bytes(tramp.content)
    checked_pc_relative = _check_trampolines(arm64, orig, new,
                                             lambda name: new.get_symbol("_" + name).value,
                                             tramp.virtual_address, code, proc.stderr)
    assert checked_pc_relative >= 1      # base's first instruction addresses `table` PC-relatively

    # the recorder: a load command on it, and the slot bound to its entry from that ordinal
    recorder = "@loader_path/libargus-static.dylib"
    loads = [c for c in new.commands if c.command == lief.MachO.LoadCommand.TYPE.LOAD_DYLIB]
    assert [c.name for c in loads][-1] == recorder
    assert [c.name for c in loads][:-1] == [c.name for c in orig.commands
                                            if c.command == lief.MachO.LoadCommand.TYPE.LOAD_DYLIB]
    slot = new.get_segment("__ARGUS_DATA")
    assert slot.init_protection == 3 and [s.name for s in slot.sections] == ["__argus_slot"]
    binds = [(x.address, x.symbol.name, x.library.name, x.library_ordinal) for x in new.bindings if x.has_symbol]
    assert (slot.virtual_address, "_argus_static_enter", recorder, len(loads)) in binds
    # the input's own bindings are all still there, at the same addresses
    assert {(x.address, x.symbol.name) for x in orig.bindings if x.has_symbol} <= {b[:2] for b in binds}
    assert not new.has_code_signature      # re-signed on the Mac (codesign -f -s -)
    # every placed trampoline reads the recorder from that slot
    placed = [n for n, name in enumerate(HOOKED) if f" {name}: hook skipped" not in proc.stderr]
    assert placed and all(_slot_load(arm64, code, tramp.virtual_address, n) == slot.virtual_address for n in placed)

    # an independent decoder of the bind opcodes: LLVM's
    objdump = shutil.which("llvm-objdump")
    if objdump is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have llvm-objdump (scripts/setup.sh installs llvm)")
        return
    listing = subprocess.run([objdump, "--macho", "--bind", "--dylibs-used", str(out)],
                             capture_output=True, text=True, check=True).stdout
    assert recorder in listing
    assert any(line.split()[:2] == ["__ARGUS_DATA", "__argus_slot"] and line.split()[-2:] ==
               ["libargus-static", "_argus_static_enter"] and int(line.split()[2], 16) == slot.virtual_address
               for line in listing.splitlines()), listing


def _ld64_lld():
    for name in ("ld64.lld-16", "ld64.lld"):
        path = shutil.which(name) or shutil.which(name, path="/usr/lib/llvm-16/bin")
        if path:
            return path
    if os.environ.get("CI"):
        pytest.fail("CI must have ld64.lld (scripts/setup.sh installs lld-16)")
    pytest.skip("ld64.lld is not installed")


# a libSystem stub for ld64.lld (zig's own .tbd names arm64e variants lld 16 cannot read)
LIBSYSTEM_TBD = """--- !tapi-tbd
tbd-version:     4
targets:         [ x86_64-macos, arm64-macos ]
install-name:    '/usr/lib/libSystem.B.dylib'
current-version: 1319
exports:
  - targets:     [ x86_64-macos, arm64-macos ]
    symbols:     [ _puts ]
...
"""
CHAINED_C = MACHO_C + """
int puts(const char *);
int greet(void) { return puts("hi"); }  /* an import: a chained bind already in the file */
"""


def _chained_dylib(tmp_path, target, *ld_flags):
    """A dylib with LC_DYLD_CHAINED_FIXUPS, as Apple's ld writes for macOS 12+:
    compiled by zig, linked by ld64.lld -fixup_chains."""
    ld = _ld64_lld()
    (tmp_path / "c.c").write_text(CHAINED_C)
    (tmp_path / "libSystem.tbd").write_text(LIBSYSTEM_TBD)
    obj, lib = tmp_path / "c.o", tmp_path / "libm.dylib"
    subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", target, "-O2", "-fomit-frame-pointer",
                    "-c", "-o", str(obj), str(tmp_path / "c.c")], check=True)
    arch = "arm64" if target.startswith("aarch64") else "x86_64"
    subprocess.run([ld, "-arch", arch, "-dylib", "-platform_version", "macos", "15.0", "15.0", "-fixup_chains",
                    "-install_name", "@rpath/libm.dylib", *ld_flags, "-o", str(lib), str(obj),
                    str(tmp_path / "libSystem.tbd")], check=True, capture_output=True)
    return lib


@pytest.mark.parametrize("target", ["aarch64-macos", "x86_64-macos"])
def test_macho_chained_fixups_rewrite(tmp_path, target):
    """Chained fixups: the slot gets its own chain (one bind of a new import
    naming the recorder's ordinal); the file's own fixups are unchanged."""
    _need_zig()
    import lief
    lief.logging.disable()
    lib = _chained_dylib(tmp_path, target, "-headerpad_max_install_names")
    spec = {"library": "libm.dylib", "hooks": [{"symbol": name, "enter": "enqueue"} for name in HOOKED]}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    out = tmp_path / "out.dylib"
    proc = _argus("instrument", str(lib), "-o", str(out), "--hooks", str(tmp_path / "spec.json"))
    assert proc.returncode == 0, proc.stderr

    orig, new = lief.MachO.parse(str(lib)).at(0), lief.MachO.parse(str(out)).at(0)
    assert orig.has_dyld_chained_fixups and new.has_dyld_chained_fixups and not new.has_dyld_info
    arm64 = target.startswith("aarch64")
    tramp, slot = new.get_segment("__ARGUS_TEXT"), new.get_segment("__ARGUS_DATA")
    code = bytes(tramp.content)
    _check_trampolines(arm64, orig, new, lambda name: new.get_symbol("_" + name).value,
                       tramp.virtual_address, code, proc.stderr)
    recorder = "@loader_path/libargus-static.dylib"
    loads = [c.name for c in new.commands if c.command == lief.MachO.LoadCommand.TYPE.LOAD_DYLIB]
    assert loads[-1] == recorder
    binds = {(x.address, x.symbol.name, x.library.name) for x in new.bindings if x.has_symbol and x.has_library}
    assert (slot.virtual_address, "_argus_static_enter", recorder) in binds
    assert {(x.address, x.symbol.name, x.library.name) for x in orig.bindings if x.has_symbol} <= binds
    assert new.dyld_chained_fixups.imports_count == orig.dyld_chained_fixups.imports_count + 1
    placed = [n for n, name in enumerate(HOOKED) if f" {name}: hook skipped" not in proc.stderr]
    assert placed and all(_slot_load(arm64, code, tramp.virtual_address, n) == slot.virtual_address for n in placed)

    # LLVM's decoder of chained fixups (llvm-objdump 16: --dyld-info walks the chains)
    objdump = shutil.which("llvm-objdump", path="/usr/lib/llvm-16/bin")
    if objdump is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have llvm-objdump 16 (scripts/setup.sh installs llvm-16)")
        return
    rows = [line.split() for line in subprocess.run([objdump, "--macho", "--dyld-info", str(out)], capture_output=True,
                                                    text=True, check=True).stdout.splitlines()]
    assert ["__ARGUS_DATA", "__argus_slot", hex(slot.virtual_address)] in [r[:3] for r in rows]
    ours = next(r for r in rows if r[:2] == ["__ARGUS_DATA", "__argus_slot"])
    assert ours[-3:] == ["0x0", "libargus-static", "_argus_static_enter"] and ours[4] == "bind", ours
    before = [r for r in subprocess.run([objdump, "--macho", "--dyld-info", str(lib)], capture_output=True,
                                        text=True, check=True).stdout.splitlines()[2:]]
    # the input's own fixups (binds and rebases) decode the same, at the same addresses
    assert {tuple(r.split()[:3] + r.split()[4:]) for r in before} <= {tuple(r[:3] + r[4:]) for r in rows}


@pytest.mark.parametrize("target", ["aarch64-macos"])
def test_macho_without_header_room_refused(tmp_path, target):
    """ld64.lld leaves no room after the load commands by default: LIEF
    would shift the contents and leave the symbols behind, so the rewrite
    is refused in one line."""
    _need_zig()
    lib = _chained_dylib(tmp_path, target)
    spec = {"library": "libm.dylib", "hooks": [{"symbol": "work", "enter": "enqueue"}]}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    proc = _argus("instrument", str(lib), "-o", str(tmp_path / "out.dylib"), "--hooks", str(tmp_path / "spec.json"))
    assert proc.returncode == 1 and not (tmp_path / "out.dylib").exists()
    assert proc.stderr.count("\n") == 1 and "-headerpad_max_install_names" in proc.stderr, proc.stderr


def _slot_load(arm64, code, tramp_va, n):
    """The address trampoline n loads the recorder's pointer from: arm64
    `adrp x16, page; ldr x16, [x16, #off]`, x86_64 `mov rax, [rip + disp]`."""
    import capstone
    if arm64:
        md = capstone.Cs(capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM)
    else:
        md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    md.detail = True
    body = list(md.disasm(code[n * 256:(n + 1) * 256], tramp_va + n * 256))
    for a, b in zip(body, body[1:]):
        if arm64 and a.mnemonic == "adrp" and b.mnemonic == "ldr" and b.op_str.startswith(a.op_str.split(",")[0]):
            return a.operands[1].imm + b.operands[1].mem.disp
        if not arm64 and a.mnemonic == "mov" and a.op_str.startswith("rax, qword ptr [rip"):
            return a.address + a.size + a.operands[1].mem.disp
    return None


@x86_64_only
def test_libc_pthread_instrumented_copy(tmp_path, argus_cli):
    """libc itself, rewritten with the shipped hooks/pthread.json (the spec
    `argus run` uses), under a real two-thread program: lock records from
    both threads on the one mutex they share."""
    require_tracing()
    import lief
    libc = next((p for p in ("/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6")
                 if os.path.exists(p)), None)
    if libc is None:
        pytest.skip("no x86_64 glibc here")
    spec = os.path.join(hookspec.default_spec_dir(), "pthread.json")
    proc = _argus("instrument", libc, "-o", str(tmp_path / "libc.so.6"), "--hooks", spec)
    assert proc.returncode == 0, proc.stderr
    # mutex lock / unlock, cond signal / broadcast; the cond waits record argument 1: `argus run` only
    assert "4 hooks placed" in proc.stdout
    assert "pthread_cond_wait: its obj (argument 1) needs `argus run`; skipped" in proc.stderr
    lock_va = lief.ELF.parse(str(tmp_path / "libc.so.6")).get_dynamic_symbol("pthread_mutex_lock").value
    argus_cli.start(size="64M")
    env = dict(os.environ, LD_LIBRARY_PATH=str(tmp_path),
               ARGUS_URING_DIR=os.path.join(argus_cli.env["ARGUS_RUN_DIR"], "urings"))
    run = subprocess.run([program("argus-mutex-holder"), "sleep", "0.2", "1.0"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    ids = json.loads(run.stdout.splitlines()[0])
    events = _events(argus_cli, ids["pid"])
    locks = [e for e in events if e["type"] == "mutex_lock"]
    unlocks = [e for e in events if e["type"] == "mutex_unlock"]
    assert len(locks) >= 40 and len(unlocks) >= 40, (len(locks), len(unlocks))
    by_obj = {}
    for e in locks:
        by_obj.setdefault(e["obj"], set()).add(e["tid"])
    assert any({ids["tid"], ids["worker_tid"]} <= tids for tids in by_obj.values())
    assert len({e["fn"] for e in locks}) == 1 and next(iter({e["fn"] for e in locks})) % 4096 == lock_va % 4096


def test_elf_arm64_rewrite(tmp_path):
    """An aarch64 Linux .so (zig cross-build): the same rewrite, checked as data."""
    _need_zig()
    import lief
    (tmp_path / "m.c").write_text(MACHO_C)
    lib = tmp_path / "libm.so"
    subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", "aarch64-linux-gnu", "-shared", "-O2",
                    "-fomit-frame-pointer", "-o", str(lib), str(tmp_path / "m.c")], check=True)
    spec = {"library": "libm.so", "hooks": [{"symbol": name, "enter": "enqueue"} for name in HOOKED]}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    out = tmp_path / "out.so"
    proc = _argus("instrument", str(lib), "-o", str(out), "--hooks", str(tmp_path / "spec.json"))
    assert proc.returncode == 0, proc.stderr
    orig, new = lief.ELF.parse(str(lib)), lief.ELF.parse(str(out))
    def code_segments(b):
        return [s for s in b.segments if s.type == lief.ELF.Segment.TYPE.LOAD and s.has(lief.ELF.Segment.FLAGS.X)]
    # LIEF makes room for the program headers by shifting the old segments; the new one comes last
    assert len(code_segments(new)) == len(code_segments(orig)) + 1
    added = [max(code_segments(new), key=lambda s: s.virtual_address)]
    rel = [r for r in new.dynamic_relocations if r.has_symbol and r.symbol.name == "argus_static_enter"]
    assert len(rel) == 1 and rel[0].type == lief.ELF.Relocation.TYPE.AARCH64_GLOB_DAT
    code = bytes(new.get_content_from_virtual_address(added[0].virtual_address, 256 * len(HOOKED)))
    assert _check_trampolines(True, orig, new, lambda name: new.get_dynamic_symbol(name).value,
                              added[0].virtual_address, code, proc.stderr,
                              lambda name: orig.get_dynamic_symbol(name).value) >= 1
