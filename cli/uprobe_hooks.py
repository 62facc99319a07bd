"""`argus start --uprobe-hooks NAME`: the hook spec through uprobes.

For processes that were not started under `argus run` (already running, or
started plainly), argusd attaches the same hooks as uprobes, system-wide.
This module turns spec files into argusd's hook list (tracer/uprobes.h):

    probe_id  enter_type  return_type  file_offset(hex)  library_path  symbol  obj_arg  ret_deref

one line per hook that resolved.  The library is the spec's soname found in
the loader cache (`ldconfig -p`, the entry of this machine's architecture);
the offset is the symbol's file offset, read from its ELF with pyelftools
(.dynsym, then .symtab) and mapped through the PT_LOAD segment holding it,
which is what the kernel's uprobe interface takes.  A hook whose library or
symbol is missing is skipped with one line; it never stops tracing.

Probe ids are the hook's index in the whole shipped spec (the order
`argus run` uses), so a probe id means the same hook either way; for spec
files given by path, the index over those files.
"""
import os
import platform
import subprocess

from argus.cli import hookspec
from argus.cli.common import ArgusError

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


def _ldconfig_paths(soname):
    """Paths the loader cache gives for soname, in its order."""
    try:
        text = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        text = ""
    paths = []
    for line in text.splitlines():
        name, _, rest = line.strip().partition(" ")
        if name == soname and "=>" in rest:
            paths.append(rest.split("=>", 1)[1].strip())
    return paths


def find_library(soname, symbols=()):
    """The real path of the library of this machine's architecture, or None."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    machine = _MACHINES.get(platform.machine())
    # a name no library has may be a program that defines the API itself
    # (Debian's python3.11 is linked with libpython): the ELF files of that
    # name in PATH that define the symbols (wrappers such as pyenv's shims are
    # scripts, and a build that loads libpython3.11.so defines none: passed over)
    programs = [os.path.join(d, soname) for d in os.get_exec_path() if os.path.isabs(d)]
    libraries = _ldconfig_paths(soname)
    for path in libraries + [p for p in programs if os.access(p, os.X_OK)]:
        try:
            with open(path, "rb") as f:
                elf = ELFFile(f)
                if elf.elfclass != 64 or (machine is not None and elf["e_machine"] != machine):
                    continue
        except (OSError, ELFError):
            continue
        if path in libraries or not symbols or symbol_offsets(path, set(symbols)):
            return os.path.realpath(path)
    return None


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
    for lib in sorted({h.library for _, h in hooks}):
        path = find_library(lib, {h.symbol for _, h in hooks if h.library == lib}) if lib != "-" else None
        libs[lib] = (path, symbol_offsets(path, {h.symbol for _, h in hooks if h.library == lib}) if path else {})
    for probe_id, h in hooks:
        symbol, enter, ret, lib = h.symbol, h.enter, h.ret, h.library
        path, offsets = libs[lib]
        if MAX_OBJ_ARG < h.obj_arg != hookspec.OBJ_PROCESS:
            skipped.append(f"uprobe hook {symbol}: argument {h.obj_arg} is not readable from a uprobe; skipped")
        elif MAX_OBJ_ARG + 1 < h.return_obj != hookspec.RETURN_PROCESS:    # return_obj n + 1 = argument n
            skipped.append(f"uprobe hook {symbol}: argument {h.return_obj - 1} (return_obj) is not readable "
                           "from a uprobe; skipped")
        elif path is None:
            skipped.append(f"uprobe hook {symbol}: library {lib} not found (ldconfig -p); skipped")
        elif symbol not in offsets:
            skipped.append(f"uprobe hook {symbol}: no such function in {path}; skipped")
        else:
            # obj_arg: the argument that is the record's obj; null_obj (what a
            # NULL obj stands for) needs a call in the process: the agent's only
            # ret_deref: the uretprobe reads the returned record (argus_uprobe.bpf.c)
            lines.append(f"{probe_id}\t{enter}\t{ret}\t{offsets[symbol]:x}\t{path}\t{symbol}\t{h.obj_arg}"
                         f"\t{h.return_obj}\t{h.obj_bits}\t{h.ret_deref}\n")
    return "".join(lines), skipped
