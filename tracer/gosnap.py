"""One snapshot of a Go program's parked goroutines, read from its memory
when argusd attaches the Go probes to it (GO_SNAPSHOT records).

Why: argusd probes a Go executable 0.2-0.5 s after its exec (or days after
the service started, for always-on tracing).  A goroutine that parked before
and is still parked when tracing stops has no GO_* row at all, so the
diagnosis cannot tell what it waits for.  argusd runs
`PYTHON -m argus.tracer.gosnap --pid P --ts ATTACH_NS --buffer FILE` once per
process it probed late (tracer/daemon/platform/argus_uprobe.c, go_snapshot);
this writes one GO_SNAPSHOT record (tracer/ringbuf/argus_event.h) per
goroutine in _Gwaiting into the buffer (ts = when read, wait_since = the
attach).

How:
  layout   the struct offsets come from the binary's own DWARF (pyelftools;
           compressed sections too): runtime.g (goid, atomicstatus,
           waitreason, lockedm, waiting, waitsince), runtime.m (procid: the
           thread's tid), runtime.sudog (c, waitlink, g), runtime.hchan
           (timer: a timer's channel, Go 1.23+; elemtype, compared with
           time.Time's type descriptor, type:* + its DW_AT_go_runtime_type,
           for the older asynchronous timer channels); the status values
           from the runtime's DW_TAG_constant _G*; the symbols runtime.allgs
           (a []*g) and runtime.waitReasonStrings (a [N]string, read from
           the file).  Only the "runtime" compile unit is read.  Cached per
           build id (Go's, else GNU's, else the file's hash) as JSON in
           cache_dir(): a binary is read once.
  walk     /proc/PID/mem (pread) while the process runs: the allgs slice
           header, its array, each g.  Racy, so every pointer must lie in a
           readable mapping of /proc/PID/maps, the status must be one the
           DWARF names, the wait reason an index of the table, the goid
           non-zero, the locked M's procid a thread of the process, a
           sudog's g the g itself; a goroutine that fails is skipped, and
           any read error ends the walk with what it has.  Never raises on
           a bad target.
  record   header tid = the M the goroutine is locked to (g.lockedm ->
           m.procid), else the pid (flag LOCKED says which); wait_obj = the
           channel (hchan) of g.waiting's sudogs (chan receive / send, one
           per case of a select): the first that is not a timer's, else 0;
           flag TIMER when every one is a timer's (<-time.After, a Timer's
           C: a select with a timeout waits for its data); for an IO wait, fd = the
           descriptor whose pollDesc holds the g in rg / wg, found through
           the process's epoll sets (/proc/PID/fdinfo: each registered fd
           and its data, the tagged *pollDesc; runtime.tagBits and
           tagAlignBits from the DWARF; pollDesc.fd must equal it), else -1;
           ts = when the g was read (its state is as of then), wait_since =
           g.waitsince when Go's GC set it, else the attach (--ts): a
           goroutine that ran between the attach and the read has GO_*
           rows there, and its wait began at its last GO_PARK.

The graph side: diagnose/goroutines.py (snapshot_waits, "parked before the
probes") and docs/event-graph.md, "Goroutines parked before the probes".
"""
import argparse
import bisect
import hashlib
import json
import os
import struct
import sys
import time

from elftools.common.exceptions import DWARFError, ELFError
from elftools.elf.elffile import ELFFile

from . import safe_files, schema
from .producer import Producer, ProducerError

CACHE_VERSION = 4
# struct -> members read (member -> (offset, byte size) in the layout)
MEMBERS = {
    "runtime.g": ("goid", "atomicstatus", "waitreason", "lockedm", "waiting", "waitsince"),
    "runtime.m": ("procid",),
    "runtime.sudog": ("g", "c", "waitlink"),
    "runtime.hchan": ("timer", "elemtype"),
    "runtime.pollDesc": ("fd", "rg", "wg"),
}
# (struct, member, byte size) that must be there with that size
REQUIRED = (("runtime.g", "goid", 8), ("runtime.g", "atomicstatus", 4), ("runtime.g", "waitreason", 1),
            ("runtime.g", "lockedm", 8), ("runtime.m", "procid", 8))
# sudog.c is a *hchan, or (Go 1.26) a maybeTraceableChan: {vp unsafe.Pointer,
# vu uintptr}, one of the two set (a pointer hidden from the GC, or not)
OPTIONAL_SIZES = {("runtime.g", "waiting"): (8,), ("runtime.g", "waitsince"): (8,), ("runtime.sudog", "g"): (8,),
                  ("runtime.sudog", "c"): (8, 16), ("runtime.sudog", "waitlink"): (8,),
                  ("runtime.hchan", "timer"): (8,), ("runtime.hchan", "elemtype"): (8,),
                  ("runtime.pollDesc", "fd"): (8,), ("runtime.pollDesc", "rg"): (8,), ("runtime.pollDesc", "wg"): (8,)}
# the netpoller's epoll data is a tagged *pollDesc: (int64(data) >> tagBits) << tagAlignBits
TAG_CONSTANTS = ("runtime.tagBits", "runtime.tagAlignBits")
# type:* starts the type descriptors: time.Time's is there at the offset
# its DWARF type's DW_AT_go_runtime_type gives; it is the element type of
# every timer's channel (time.After, Timer.C, Ticker.C), also where
# hchan.timer is not set (asynctimerchan=1: Go before 1.23, GOPATH mode)
SYMBOLS = ("runtime.allgs", "runtime.waitReasonStrings", "type:*")
DW_AT_GO_RUNTIME_TYPE = 0x2904
G_SCAN = 0x1000
MAX_GS = 1 << 20
MAX_SUDOGS = 64                    # a select's cases on g.waiting

# struct argus_ev_go_snapshot (96 bytes)
RECORD = struct.Struct("<QIIHHHH" "QQqIiBBB5x32s")
assert RECORD.size == 96


class LayoutError(Exception):
    """The binary is not a Go program this can read (no DWARF, no symbol...)."""


def cache_dir():
    env = os.environ.get("ARGUS_GO_LAYOUT_CACHE")
    if env:
        return env
    if os.geteuid() == 0:
        return "/var/cache/argus/go-layout"
    return os.path.join(os.path.expanduser("~"), ".cache", "argus", "go-layout")


def build_id(elf, path):
    """A key for this build: Go's build id, else GNU's, else the file's sha256."""
    for name in (".note.go.buildid", ".note.gnu.build-id"):
        sec = elf.get_section_by_name(name)
        if sec is not None and sec.data_size:
            return name.split(".")[2] + "-" + hashlib.sha256(sec.data()).hexdigest()[:32]
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "sha256-" + h.hexdigest()[:32]


def _member_offset(die):
    a = die.attributes.get("DW_AT_data_member_location")
    if a is None:
        return None
    if isinstance(a.value, int):
        return a.value
    # a location expression: DW_OP_plus_uconst N (0x23, ULEB128)
    v = list(a.value)
    if v and v[0] == 0x23:
        n = shift = 0
        for b in v[1:]:
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return n
    return None


def _type_size(die, depth=0):
    t = die.get_DIE_from_attribute("DW_AT_type") if "DW_AT_type" in die.attributes else None
    while t is not None and depth < 8:
        if "DW_AT_byte_size" in t.attributes:
            return t.attributes["DW_AT_byte_size"].value
        if t.tag == "DW_TAG_pointer_type":
            return 8
        t = t.get_DIE_from_attribute("DW_AT_type") if "DW_AT_type" in t.attributes else None
        depth += 1
    return None


def _vaddr_bytes(elf, vaddr, size):
    """size bytes of the file image at vaddr (a PT_LOAD segment's file part)."""
    for seg in elf.iter_segments():
        if seg["p_type"] != "PT_LOAD":
            continue
        lo, filesz = seg["p_vaddr"], seg["p_filesz"]
        if lo <= vaddr and vaddr + size <= lo + filesz:
            elf.stream.seek(seg["p_offset"] + vaddr - lo)
            return elf.stream.read(size)
    return None


def read_layout(path):
    """The layout dict of the Go executable at path, from its DWARF and
    symbols (no cache).  Raises LayoutError."""
    with open(path, "rb") as f:
        elf = ELFFile(f)
        if elf["e_machine"] != "EM_X86_64":
            raise LayoutError("not an x86_64 executable")
        if not elf.has_dwarf_info():
            raise LayoutError("no DWARF (built with -ldflags=-w?)")
        dwarf = elf.get_dwarf_info()      # pyelftools decompresses .zdebug / SHF_COMPRESSED sections
        structs, statuses, time_type, consts = {}, {}, None, {}
        for cu in dwarf.iter_CUs():
            top = cu.get_top_DIE()
            name = top.attributes.get("DW_AT_name")
            if name is None or name.value != b"runtime":
                continue
            for die in top.iter_children():
                nm = die.attributes.get("DW_AT_name")
                if nm is None:
                    continue
                nm = nm.value.decode(errors="replace")
                if die.tag == "DW_TAG_structure_type" and nm == "time.Time" and \
                        DW_AT_GO_RUNTIME_TYPE in die.attributes:
                    time_type = int(die.attributes[DW_AT_GO_RUNTIME_TYPE].value)
                if die.tag == "DW_TAG_structure_type" and nm in MEMBERS and nm not in structs:
                    want = MEMBERS[nm]
                    fields = {}
                    for m in die.iter_children():
                        mn = m.attributes.get("DW_AT_name")
                        if m.tag == "DW_TAG_member" and mn is not None and mn.value.decode() in want:
                            off = _member_offset(m)
                            if off is not None:
                                fields[mn.value.decode()] = (off, _type_size(m))
                    structs[nm] = {"size": die.attributes["DW_AT_byte_size"].value
                                   if "DW_AT_byte_size" in die.attributes else None, "fields": fields}
                elif die.tag == "DW_TAG_constant" and nm.startswith("runtime._G") and \
                        "DW_AT_const_value" in die.attributes:
                    statuses[nm[len("runtime."):]] = int(die.attributes["DW_AT_const_value"].value)
                elif die.tag == "DW_TAG_constant" and nm in TAG_CONSTANTS and "DW_AT_const_value" in die.attributes:
                    consts[nm] = int(die.attributes["DW_AT_const_value"].value)
        for s, m, size in REQUIRED:
            got = structs.get(s, {}).get("fields", {}).get(m)
            if got is None or got[1] not in (size, None):
                raise LayoutError(f"no {s}.{m} of {size} bytes in the DWARF")
        for (s, m), sizes in OPTIONAL_SIZES.items():
            got = structs.get(s, {}).get("fields", {}).get(m)
            if got is not None and got[1] not in sizes + (None,):
                del structs[s]["fields"][m]
        if "_Gwaiting" not in statuses:
            raise LayoutError("no runtime._Gwaiting constant in the DWARF")
        syms = {}
        tab = elf.get_section_by_name(".symtab")
        if tab is None:
            raise LayoutError("no symbol table (stripped)")
        for sym in tab.iter_symbols():
            if sym.name in SYMBOLS:
                syms[sym.name] = (sym["st_value"], sym["st_size"])
        if "runtime.allgs" not in syms:
            raise LayoutError("no runtime.allgs symbol")
        reasons = []
        if "runtime.waitReasonStrings" in syms:
            addr, size = syms["runtime.waitReasonStrings"]
            raw = _vaddr_bytes(elf, addr, size) or b""
            for k in range(len(raw) // 16):
                ptr, n = struct.unpack_from("<QQ", raw, 16 * k)
                text = _vaddr_bytes(elf, ptr, n) if 0 < n <= 128 else b""
                reasons.append((text or b"").decode(errors="replace"))
        first_load = min((seg["p_vaddr"] - seg["p_offset"] for seg in elf.iter_segments()
                          if seg["p_type"] == "PT_LOAD"), default=0)
        types = syms.get("type:*", (0, 0))[0]
        if time_type is not None and types and time_type < types:
            time_type += types            # an offset from type:* (Go 1.20+), else an address
        return {"version": CACHE_VERSION, "pie": elf["e_type"] == "ET_DYN", "first_load": first_load,
                "time_type": time_type or 0,
                "tag_bits": [consts.get(c) for c in TAG_CONSTANTS] if len(consts) == 2 else None,
                "structs": structs, "statuses": statuses, "symbols": syms, "wait_reasons": reasons}


def layout(path, use_cache=True):
    """(layout, key, where: "cache" or "dwarf") of the Go executable at path."""
    with open(path, "rb") as f:
        key = build_id(ELFFile(f), path)
    d = cache_dir()
    name = key + ".json"
    if use_cache:
        try:
            with open(os.path.join(d, name)) as f:
                got = json.load(f)
            if got.get("version") == CACHE_VERSION:
                got["symbols"] = {k: tuple(v) for k, v in got["symbols"].items()}
                for s in got["structs"].values():
                    s["fields"] = {k: tuple(v) for k, v in s["fields"].items()}
                return got, key, "cache"
        except (OSError, ValueError, KeyError, AttributeError):
            pass
    got = read_layout(path)
    if use_cache:
        try:
            fd = safe_files.open_dir(d, create=True)
            try:
                safe_files.write_file(fd, name, json.dumps(got))
            finally:
                os.close(fd)
        except (OSError, safe_files.UnsafePath):
            pass
    return got, key, "dwarf"


class Memory:
    """Reads of a live process: pread on /proc/PID/mem, checked against its
    readable mappings."""

    def __init__(self, pid):
        self.pid = pid
        self.fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY | os.O_CLOEXEC)
        self.maps = []
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                self.maps.append((lo, hi, parts[1], int(parts[2], 16), parts[5].strip() if len(parts) > 5 else ""))
        self.maps.sort()
        self._starts = [m[0] for m in self.maps]

    def close(self):
        os.close(self.fd)

    def mapped(self, addr, size):
        if not addr or addr < 4096 or size <= 0:
            return False
        i = bisect.bisect_right(self._starts, addr) - 1
        if i < 0:
            return False
        lo, hi, perms = self.maps[i][:3]
        return perms[0] == "r" and addr + size <= hi

    def read(self, addr, size):
        """The bytes, or None when unmapped or the read fails (the process
        changed or ended under us)."""
        if not self.mapped(addr, size):
            return None
        try:
            got = os.pread(self.fd, size, addr)
        except OSError:
            return None
        return got if len(got) == size else None

    def bias(self, lay):
        """Load bias of the executable (0 unless PIE)."""
        if not lay.get("pie"):
            return 0
        try:
            exe = os.readlink(f"/proc/{self.pid}/exe").removesuffix(" (deleted)")
        except OSError:
            return 0
        for lo, hi, perms, off, path in self.maps:
            if path == exe and off == 0:
                return lo - (lay["first_load"] & ~0xFFF)
        return 0


def _field(lay, s, m):
    return lay["structs"].get(s, {}).get("fields", {}).get(m)


def walk(pid, lay):
    """The goroutines of pid in _Gwaiting, as dicts: g, goid, status,
    wait_reason (index), wait (text), locked_tid (0: none), wait_obj (0:
    not known), wait_since_ns (0: not known).  Also (examined, skipped)
    counts.  Racy by nature: whatever fails validation is skipped."""
    try:
        mem = Memory(pid)
    except OSError:
        return [], 0, 0
    try:
        return _walk(mem, pid, lay)
    finally:
        mem.close()


def _walk(mem, pid, lay):
    out, examined, skipped = [], 0, 0
    bias = mem.bias(lay)
    hdr = mem.read(lay["symbols"]["runtime.allgs"][0] + bias, 24)
    if hdr is None:
        return out, 0, 0
    base, n, cap = struct.unpack("<QQQ", hdr)
    if not 0 < n <= min(cap, MAX_GS):
        return out, 0, 0
    arr = mem.read(base, 8 * n)
    if arr is None:
        return out, 0, 0
    gsize = lay["structs"]["runtime.g"]["size"] or 0
    f_goid = _field(lay, "runtime.g", "goid")
    f_status = _field(lay, "runtime.g", "atomicstatus")
    f_reason = _field(lay, "runtime.g", "waitreason")
    f_locked = _field(lay, "runtime.g", "lockedm")
    f_waiting = _field(lay, "runtime.g", "waiting")
    f_since = _field(lay, "runtime.g", "waitsince")
    f_procid = _field(lay, "runtime.m", "procid")
    f_sg_g = _field(lay, "runtime.sudog", "g")
    f_sg_c = _field(lay, "runtime.sudog", "c")
    f_sg_link = _field(lay, "runtime.sudog", "waitlink")
    f_timer = _field(lay, "runtime.hchan", "timer")
    f_elemtype = _field(lay, "runtime.hchan", "elemtype")
    time_type = lay.get("time_type", 0)
    time_type = time_type + bias if time_type else 0
    sgsize = lay["structs"].get("runtime.sudog", {}).get("size") or 0
    need = max(off + (size or 1) for off, size in
               (f for f in (f_goid, f_status, f_reason, f_locked, f_waiting, f_since) if f))
    gsize = max(gsize, need)
    statuses = set(lay["statuses"].values())
    waiting = lay["statuses"]["_Gwaiting"]
    reasons = lay["wait_reasons"]
    tasks = set()
    try:
        tasks = {int(t) for t in os.listdir(f"/proc/{pid}/task")}
    except OSError:
        pass
    now = time.monotonic_ns()
    for gp in struct.unpack(f"<{n}Q", arr):
        examined += 1
        raw = mem.read(gp, gsize)
        if raw is None:
            skipped += 1
            continue
        status = struct.unpack_from("<I", raw, f_status[0])[0] & ~G_SCAN
        goid = struct.unpack_from("<Q", raw, f_goid[0])[0]
        reason = raw[f_reason[0]]
        if status not in statuses or not 0 < goid < (1 << 48) or (reasons and reason >= len(reasons)):
            skipped += 1
            continue
        if status != waiting:
            continue
        tid = 0
        m = struct.unpack_from("<Q", raw, f_locked[0])[0]
        if m:
            got = mem.read(m + f_procid[0], 8)
            tid = struct.unpack("<Q", got)[0] if got else 0
            if tid not in tasks:
                tid = 0
        # every channel on g.waiting (a select has one sudog per case): the
        # wait object is the first that is not a timer's; a timed wait only
        # when every one is a timer's (a select with a timeout waits for data)
        chans = []
        if f_waiting and f_sg_c and sgsize:
            sg, hops = struct.unpack_from("<Q", raw, f_waiting[0])[0], 0
            while sg and hops < MAX_SUDOGS:
                s = mem.read(sg, sgsize)
                if s is None or (f_sg_g and struct.unpack_from("<Q", s, f_sg_g[0])[0] != gp):
                    break
                c = struct.unpack_from("<Q", s, f_sg_c[0])[0]
                if not c and f_sg_c[1] == 16:      # maybeTraceableChan.vu
                    c = struct.unpack_from("<Q", s, f_sg_c[0] + 8)[0]
                if c and mem.mapped(c, 8):
                    chans.append((c, _timer_chan(mem, c, f_timer, f_elemtype, time_type)))
                sg = struct.unpack_from("<Q", s, f_sg_link[0])[0] if f_sg_link else 0
                hops += 1
        data = [c for c, t in chans if not t]
        chan = data[0] if data else (chans[0][0] if chans else 0)
        timer = bool(chans) and not data
        since = struct.unpack_from("<q", raw, f_since[0])[0] if f_since else 0
        if not 0 < since <= now:
            since = 0
        out.append({"g": gp, "goid": goid, "status": status, "wait_reason": reason,
                    "wait": reasons[reason] if reason < len(reasons) else "", "locked_tid": tid,
                    "wait_obj": chan, "timer": bool(timer), "wait_since_ns": since, "fd": -1,
                    "read_ns": time.monotonic_ns()})
    if any(g["wait"].startswith("IO wait") for g in out):
        fds = netpoll_fds(mem, pid, lay)
        for g in out:
            g["fd"] = fds.get(g["g"], -1)
    return out, examined, skipped


def _timer_chan(mem, c, f_timer, f_elemtype, time_type):
    """Whether channel c is a timer's: hchan.timer set (Go 1.23+), or its
    element type is time.Time's descriptor (the older asynchronous ones)."""
    if f_timer:
        t = mem.read(c + f_timer[0], 8)
        if t and struct.unpack("<Q", t)[0]:
            return True
    if f_elemtype and time_type:
        t = mem.read(c + f_elemtype[0], 8)
        return bool(t and struct.unpack("<Q", t)[0] == time_type)
    return False


def netpoll_fds(mem, pid, lay):
    """{g: fd} of the goroutines parked in the netpoller: each fd in the
    process's epoll sets (/proc/PID/fdinfo of its eventpoll fds: tfd and
    data, the tagged *pollDesc), whose pollDesc has that fd and the g in
    rg (a read) or wg (a write).  {} when anything is missing."""
    f_fd, f_rg, f_wg = (_field(lay, "runtime.pollDesc", m) for m in ("fd", "rg", "wg"))
    if not (f_fd and f_rg and f_wg and lay.get("tag_bits")):
        return {}
    tag_bits, align_bits = lay["tag_bits"]
    out = {}
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return {}
    for n in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{n}") != "anon_inode:[eventpoll]":
                continue
            with open(f"/proc/{pid}/fdinfo/{n}") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) < 6 or parts[0] != "tfd:" or parts[4] != "data:":
                continue
            try:
                tfd, data = int(parts[1]), int(parts[5], 16)
            except ValueError:
                continue
            if data >= 1 << 63:
                data -= 1 << 64
            pd = (data >> tag_bits) << align_bits
            raw = mem.read(pd, max(f_fd[0], f_rg[0], f_wg[0]) + 8) if pd > 0 else None
            if raw is None or struct.unpack_from("<Q", raw, f_fd[0])[0] != tfd:
                continue
            for off in (f_rg[0], f_wg[0]):
                g = struct.unpack_from("<Q", raw, off)[0]
                if g > 2:            # pdNil 0, pdReady 1, pdWait 2, else the parked g
                    out[g] = tfd
    return out


def record(pid, attach_ns, gor):
    """The 96-byte GO_SNAPSHOT record of one goroutine of walk(): ts = when
    it was read, wait_since = g.waitsince when Go set it, else the attach
    (parked at the read, and since the attach unless a GO_* row of it
    comes between)."""
    fd = gor.get("fd", -1)
    flags = (schema.GO_SNAP_LOCKED if gor["locked_tid"] else 0) | (schema.GO_SNAP_CHAN if gor["wait_obj"] else 0) \
        | (schema.GO_SNAP_TIMER if gor.get("timer") else 0) | (schema.GO_SNAP_FD if fd >= 0 else 0)
    since = gor["wait_since_ns"] if 0 < gor["wait_since_ns"] <= attach_ns else attach_ns
    return RECORD.pack(max(gor.get("read_ns", attach_ns), attach_ns), pid, gor["locked_tid"] or pid,
                       schema.GO_SNAPSHOT, RECORD.size, 0xFFFF, 0,
                       gor["g"], gor["wait_obj"], since, gor["goid"] & 0xFFFFFFFF, fd,
                       gor["status"], gor["wait_reason"], flags,
                       gor["wait"].encode()[:schema.GO_SNAP_WAIT_LEN - 1])


def snapshot(pid, use_cache=True):
    """(goroutines, info) of pid: walk() through its executable's layout."""
    t0 = time.monotonic()
    exe = f"/proc/{pid}/exe"
    lay, key, where = layout(exe, use_cache=use_cache)
    t1 = time.monotonic()
    gors, examined, skipped = walk(pid, lay)
    return gors, {"build": key, "layout_from": where, "layout_ms": round((t1 - t0) * 1e3, 1),
                  "walk_ms": round((time.monotonic() - t1) * 1e3, 1), "examined": examined, "skipped": skipped}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m argus.tracer.gosnap",
                                 description="Record the parked goroutines of a running Go program "
                                             "(argusd runs this when it attaches the Go probes).")
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--ts", type=int, help="record time (CLOCK_MONOTONIC ns; default: now)")
    ap.add_argument("--buffer", help="Argus ring buffer to write GO_SNAPSHOT records into")
    ap.add_argument("--json", action="store_true", help="print the goroutines as JSON lines instead")
    ap.add_argument("--no-cache", action="store_true", help="read the DWARF even when the layout is cached")
    args = ap.parse_args(argv)
    ts = args.ts or time.monotonic_ns()
    try:
        gors, info = snapshot(args.pid, use_cache=not args.no_cache)
    except (OSError, LayoutError, ELFError, DWARFError, ValueError, KeyError, IndexError, TypeError,
            AttributeError, struct.error) as e:
        # a binary this cannot read (odd DWARF, a foreign Go): no snapshot, the trace goes on
        print(f"argus gosnap: pid {args.pid}: no goroutine snapshot: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    if args.json or not args.buffer:
        for gor in gors:
            print(json.dumps(gor))
    if args.buffer:
        try:
            with Producer(args.buffer, os.getpid()) as p:
                for gor in gors:
                    p.write_raw(record(args.pid, ts, gor))
        except (OSError, ProducerError) as e:
            print(f"argus gosnap: pid {args.pid}: cannot write to {args.buffer}: {e}", file=sys.stderr)
            return 1
    locked = sum(1 for g in gors if g["locked_tid"])
    print(f"argus gosnap: pid {args.pid}: {len(gors)} goroutines parked ({locked} locked to a thread; "
          f"{info['examined']} examined, {info['skipped']} skipped), layout from {info['layout_from']} "
          f"in {info['layout_ms']} ms, walk {info['walk_ms']} ms", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
