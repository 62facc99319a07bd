"""Field offsets from an image's debug info, through lldb (no process needed).

`_PyRuntime.ceval.gil.locked`: the global's type from DWARF, walked member by
member; returns the field's offset from the global's start and its size, so
bp_watch can watch a field of a struct variable (symbols.resolve_watch adds
the global's runtime address).
"""
from argus.debugger.base import DebuggerError
from argus.debugger.backends.lldb import find_lldb


def field_offset(path, symbol, fields):
    lldb = find_lldb()
    dbg = lldb.SBDebugger.Create(False)
    try:
        target = dbg.CreateTarget(path)
        if not target.IsValid():
            raise DebuggerError(f"lldb cannot load {path}")
        var = target.FindFirstGlobalVariable(symbol)
        if not var.IsValid():
            raise DebuggerError(f"no debug info for {symbol} in {path}: cannot resolve "
                                f"{symbol}.{'.'.join(fields)} (use --address)")
        base = var.GetAddress().GetFileAddress()
        v = var
        for i, f in enumerate(fields):
            v = v.GetChildMemberWithName(f)
            if not v.IsValid():
                raise DebuggerError(f"{symbol}.{'.'.join(fields[:i])} has no field {f} in {path}".replace(".:", ":"))
        return v.GetAddress().GetFileAddress() - base, v.GetByteSize()
    finally:
        lldb.SBDebugger.Destroy(dbg)
