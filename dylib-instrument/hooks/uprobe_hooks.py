"""`argus start --uprobe-hooks NAME`: the hook spec through uprobes.

For processes that were not started under `argus run` (already running, or
started plainly), argusd attaches the same hooks as uprobes, system-wide.
This module turns spec files into argusd's hook list (tracer/daemon/platform/side_source.h):

    probe_id  enter_type  return_type  file_offset(hex)  library_path  symbol  obj_arg  ret_deref

one line per hook and library file that resolved.  The library files of a
spec's library (a soname or a pattern, or a list of them) are, of this
machine's architecture: the loader cache's entries (`ldconfig -p`), ELF
programs of that name in PATH that define the symbols (Debian's python3.11
links libpython in), and the files running processes map (/proc/*/maps)
that define them: a pyenv or venv interpreter's libpython, an application's
bundled GLib.  Every distinct file gets its own uprobes under the same
probe id.  The offset is the symbol's file offset, read from its ELF with
pyelftools (.dynsym, then .symtab) and mapped through the PT_LOAD segment
holding it, which is what the kernel's uprobe interface takes.  A hook
whose library or symbol is missing is skipped with one line; it never
stops tracing.  A library outside the loader cache and PATH is found only
while some process maps it: start the program first, or use `argus run`.

Probe ids are the hook's index in the whole shipped spec (the order
`argus run` uses), so a probe id means the same hook either way; for spec
files given by path, the index over those files.
"""
import os
import platform
import subprocess

from argus.hooks import hookspec
from argus.tracer.errors import ArgusError

_MACHINES = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64", "arm64": "EM_AARCH64"}


def spec_paths(names):
    """Spec files for NAMEs: a shipped spec (glib, pthread) or a .json path."""
    d = hookspec.default_spec_dir()
    out = []
    for name in names:
        if name.endswith(".json") or os.sep in name:
            out.append(os.path.abspath(name))
            continue
        path = os.path.join(d, name + ".json")
        if not os.path.isfile(path):
            shipped = sorted(n[:-5] for n in os.listdir(d) if n.endswith(".json")) if os.path.isdir(d) else []
            raise ArgusError(f"--uprobe-hooks {name}: no such hook spec; shipped: {', '.join(shipped) or 'none'}")
        out.append(path)
    return out


def numbered_hooks(paths):
    """(probe_id, hookspec.Hook) of the given spec files."""
    d = hookspec.default_spec_dir()
    shipped = sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(".json")) if os.path.isdir(d) else []
    wanted = {os.path.realpath(p) for p in paths}
    order = shipped if wanted <= {os.path.realpath(p) for p in shipped} else paths
    out, i = [], 0
    for p in order:
        hooks = hookspec.load_file(p)
        if os.path.realpath(p) in wanted:
            out.extend((i + k, h) for k, h in enumerate(hooks))
        i += len(hooks)
    return out


def _ldconfig():
    """(soname, path) of the loader cache, in its order."""
    try:
        text = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        text = ""
    out = []
    for line in text.splitlines():
        name, _, rest = line.strip().partition(" ")
        if "=>" in rest:
            out.append((name, rest.split("=>", 1)[1].strip()))
    return out


def _path_entries():
    """The files in PATH's directories, in PATH order."""
    out = []
    for d in os.get_exec_path():
        if not os.path.isabs(d):
            continue
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        out.extend(os.path.join(d, n) for n in names)
    return out


def _mappings():
    """(pid, path) of the files running processes map (/proc/PID/maps)."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as f:
                paths = {parts[5].rstrip("\n") for parts in (line.split(None, 5) for line in f) if len(parts) == 6}
        except OSError:
            continue      # the process exited, or is not ours to read
        out.extend((pid, path) for path in sorted(paths) if path.startswith("/") and not path.endswith(" (deleted)"))
    return out


class _Machine:
    """What library files this machine has, read once per hook list: the
    loader cache, PATH's programs and the files running processes map."""

    def __init__(self):
        self.cache = _ldconfig()
        self.programs = _path_entries()
        self.mapped = _mappings()


def _path_programs(patterns, machine=None):
    """Executable files in PATH whose names match."""
    return [p for p in (machine or _Machine()).programs
            if hookspec.matches(os.path.basename(p), patterns) and os.access(p, os.X_OK)]


def _mapped_files(patterns, machine=None):
    """Files that running processes map whose base names match.  The pathname
    field of /proc/PID/maps is in the process's own mount namespace: a file
    that is not the same one here (a container's) is taken through
    /proc/PID/root, which the uprobe attach resolves while the process lives."""
    out = []
    for pid, path in (machine or _Machine()).mapped:
        if hookspec.matches(os.path.basename(path), patterns):
            inside = f"/proc/{pid}/root{path}"
            out.append(path if _same_file(path, inside) else inside)
    return out


def _same_file(a, b):
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _is_elf_here(path):
    """Whether path is a 64-bit ELF file of this machine's architecture."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    machine = _MACHINES.get(platform.machine())
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            return elf.elfclass == 64 and (machine is None or elf["e_machine"] == machine)
    except (OSError, ELFError):
        return False


def _resolve(patterns, symbols, machine):
    """[(path, {symbol: offset})] of the library files for a spec's library
    alternatives (sonames or fnmatch patterns), in the order: loader cache,
    PATH programs, files mapped by running processes; each file once (by
    inode), its symbol table read once.  Programs and mapped files count
    only if they define one of the symbols (wrappers such as pyenv's shims
    are scripts; a python3.11 that loads libpython3.11.so defines none)."""
    cached = [path for name, path in machine.cache if hookspec.matches(name, patterns)]
    out, seen = [], set()
    for path in cached + _path_programs(patterns, machine) + _mapped_files(patterns, machine):
        try:
            st = os.stat(path)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) in seen or not _is_elf_here(path):
            continue
        offsets = symbol_offsets(path, set(symbols)) if symbols else {}
        if path in cached or not symbols or offsets:
            seen.add((st.st_dev, st.st_ino))
            out.append((path if path.startswith("/proc/") else os.path.realpath(path), offsets))
    return out


def find_libraries(patterns, symbols=()):
    """The real paths of the library files for a spec's library alternatives (_resolve)."""
    return [path for path, _ in _resolve(patterns, symbols, _Machine())]


def symbol_offsets(path, symbols):
    """{symbol: file offset} of the defined functions among symbols in path."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    found = {}
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            loads = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]
            for name in (".dynsym", ".symtab"):
                table = elf.get_section_by_name(name)
                if table is None:
                    continue
                for sym in table.iter_symbols():
                    base = sym.name.split("@")[0]
                    if (base not in symbols or base in found or sym["st_info"]["type"] not in ("STT_FUNC", "STT_GNU_IFUNC")
                            or sym["st_shndx"] == "SHN_UNDEF" or not sym["st_value"]):
                        continue
                    for seg in loads:
                        if seg["p_vaddr"] <= sym["st_value"] < seg["p_vaddr"] + seg["p_filesz"]:
                            found[base] = sym["st_value"] - seg["p_vaddr"] + seg["p_offset"]
                            break
    except (OSError, ELFError):
        return {}
    return found


MAX_OBJ_ARG = 4     # the uprobe program reads arguments 0-4 (libbpf has no PT_REGS_PARM6)


def hook_list(names):
    """argusd's hook list for the named specs and the lines of what was skipped."""
    hooks = numbered_hooks(spec_paths(names))
    lines, skipped, libs = [], [], {}
    machine = _Machine()
    for lib in sorted({h.library for _, h in hooks}):
        symbols = {h.symbol for _, h in hooks if h.library == lib}
        libs[lib] = _resolve(lib, symbols, machine) if lib != ("-",) else []
    for probe_id, h in hooks:
        symbol, enter, ret, lib = h.symbol, h.enter, h.ret, h.library
        found = [(path, offsets[symbol]) for path, offsets in libs[lib] if symbol in offsets]
        if MAX_OBJ_ARG < h.obj_arg != hookspec.OBJ_PROCESS:
            skipped.append(f"uprobe hook {symbol}: argument {h.obj_arg} is not readable from a uprobe; skipped")
        elif MAX_OBJ_ARG + 1 < h.return_obj != hookspec.RETURN_PROCESS:    # return_obj n + 1 = argument n
            skipped.append(f"uprobe hook {symbol}: argument {h.return_obj - 1} (return_obj) is not readable "
                           "from a uprobe; skipped")
        elif not libs[lib]:
            skipped.append(f"uprobe hook {symbol}: library {' or '.join(lib)} not found (ldconfig -p, PATH, "
                           "running processes); skipped")
        elif not found:
            skipped.append(f"uprobe hook {symbol}: no such function in {', '.join(p for p, _ in libs[lib])}; "
                           "skipped")
        else:
            # obj_arg: the argument that is the record's obj; null_obj (what a
            # NULL obj stands for) needs a call in the process: the agent's only
            # ret_deref: the uretprobe reads the returned record (argus_uprobe.bpf.c)
            lines.extend(f"{probe_id}\t{enter}\t{ret}\t{offset:x}\t{path}\t{symbol}\t{h.obj_arg}"
                         f"\t{h.return_obj}\t{h.obj_bits}\t{h.ret_deref}\n" for path, offset in found)
    return "".join(lines), skipped
