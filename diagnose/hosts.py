"""The hosts of a graph merged from several buffers, in the reports.

graphbuild/multihost.py builds such a graph; here are what the diagnosis
says of it (docs/diagnosis-json.md, "hosts"):
  - ident(): a thread's pid and tid on its own host, and the host's name
    (the text shows them as host:pid);
  - hosts_json(): per host its name, header identity, buffer, and clock
    against the reference host (the first buffer): offset at an anchor
    time, drift, their bounds, how they were found and from how many pairs;
  - untraced_peer(): a wait on an inet socket whose other end no traced
    host holds: the end of what the traces can follow, with the address.
Invariants: nothing here runs for a graph of one buffer (g.hosts is None),
so one buffer's diagnosis is unchanged.
"""
from argus.tracer import schema
from argus.graphbuild import multihost as MH
from argus.diagnose import objects as OBJ


def ident(g, out):
    """out (a _ident dict with the graph's pid / tid) with local ids and the host."""
    if g.hosts is None:
        return out
    h = MH.host_of(out["pid"])
    out["host"] = g.hosts[h].name if h < len(g.hosts) else f"host{h}"
    out["pid"] = MH.local_id(out["pid"])
    out["tid"] = MH.local_id(out["tid"])
    return out


def localized(g, item):
    """A copy of a JSON item naming a thread by graph ids (tid, maybe pid)
    with local ids and its host, as ident(); the item itself without hosts."""
    if g.hosts is None or not item or "tid" not in item:
        return item
    out = dict(item)
    h = MH.host_of(out["tid"])
    out["host"] = g.hosts[h].name if h < len(g.hosts) else f"host{h}"
    for k in ("pid", "tid"):
        if k in out:
            out[k] = MH.local_id(out[k])
    return out


def label(x, key="pid"):
    """host:pid of a JSON item (just pid without hosts)."""
    return f"{x['host']}:{x[key]}" if x.get("host") else f"{x[key]}"


def graph_label(g, ident):
    """A graph id as text: host:id with several hosts, else the id."""
    if g.hosts is None:
        return str(ident)
    h = MH.host_of(ident)
    name = g.hosts[h].name if h < len(g.hosts) else f"host{h}"
    return f"{name}:{MH.local_id(ident)}"


def parse_ident(g, text):
    """The graph id of a pid or tid the user typed: N, or HOST:N with several
    hosts (a bare N is the first host's); ValueError with the reason."""
    name, _, n = str(text).rpartition(":")
    if not n.isdigit():
        raise ValueError(f"not a pid: {text}")
    if not name:
        return int(n)
    if g.hosts is None:
        raise ValueError(f"{text}: this trace has one host, give the pid alone")
    for h in g.hosts:
        if h.name == name:
            return MH.global_id(h.index, int(n))
    raise ValueError(f"{text}: no host {name} (hosts: {', '.join(h.name for h in g.hosts)})")


def on_host(g, ident):
    """(the id on its own host, " on host NAME" or ""): for a command to run there."""
    if g.hosts is None:
        return int(ident), ""
    return MH.local_id(ident), f" on host {graph_label(g, ident).rpartition(':')[0]}"


def hosts_json(g):
    out = []
    for h in g.hosts:
        c = h.clock
        item = {"index": h.index, "name": h.name, "hostname": h.hostname, "boot_id": h.boot_id, "buffer": h.path,
                "reference": h.index == 0, "method": c.method, "pairs": int(c.pairs),
                "via": g.hosts[c.via].name if c.via >= 0 else None,
                "anchor_ns": int(c.anchor), "offset_ns": int(round(c.c)), "drift_ppm": c.d / 1000.0,
                "offset_bounds_ns": [int(round(b)) for b in c.bounds] if c.bounds is not None else None,
                "first_ns": int(h.first_ts), "last_ns": int(h.last_ts)}
        out.append(item)
    return out


def untraced_peer(g, v):
    """{"address", "local", "proto"} when segment v waits on an inet socket
    whose remote end no traced process holds, else None."""
    if g.hosts is None or v is None or v < 0 or not g.seg.wait_known[v]:
        return None
    t, i = OBJ._fd_record(g, v)
    if i < 0 or int(t.kind[i]) != schema.FD_SOCKET or int(t.family[i]) not in (2, 10):
        return None
    peer = int(t.peer[i])
    if not peer or peer in _traced(g):
        return None
    out = {"address": MH.endpoint_text(peer), "local": MH.endpoint_text(int(t.local[i])),
           "fd": int(t.fd[i])}
    return out


def _traced(g):
    s = g.derived.traced_endpoints
    if s is None:
        s = MH.traced_endpoints(g)
        g.derived.traced_endpoints = s
    return s


def chain_end(g, items):
    """The untraced peer at the end of the chain: the last of items (path
    elements, then root causes, as JSON dicts with "vertex") that waits on
    one; the dict carries it as "untraced_peer" too."""
    end = None
    for x in items:
        p = untraced_peer(g, x.get("vertex"))
        if p is not None:
            x["untraced_peer"] = p
            end = dict(p, vertex=x["vertex"], host=x.get("host"), pid=x["pid"], tid=x["tid"], comm=x.get("comm"),
                       process=x.get("process"))
    return end


def annotate(g, doc):
    """The diagnosis JSON doc with its hosts section and chain end (module doc)."""
    if g.hosts is None:
        return doc
    doc["hosts"] = hosts_json(g)
    doc["chain_end"] = chain_end(g, list(doc["path"]) + list(doc["root_causes"]))
    return doc


def text_lines(j):
    """The report's lines on hosts: their clocks and the chain's untraced end."""
    hosts = j.get("hosts")
    if not hosts:
        return []
    out = ["", f"Hosts ({len(hosts)} buffers, times on {hosts[0]['name']}'s clock):"]
    for h in hosts:
        if h["reference"]:
            out.append(f"  {h['name']}: reference ({h['buffer']})")
            continue
        b = h.get("offset_bounds_ns")
        bounds = f" [{b[0] / 1e6:+.3f} .. {b[1] / 1e6:+.3f} ms]" if b else " (bounds unknown)"
        out.append(f"  {h['name']}: offset {h['offset_ns'] / 1e6:+.3f} ms{bounds}, drift {h['drift_ppm']:+.1f} ppm, "
                   f"{h['method']} from {h['pairs']} message pairs" + (f" via {h['via']}" if h.get("via") else "")
                   + f" ({h['buffer']})")
    end = j.get("chain_end")
    if end:
        out.append(f"  the chain ends at {end['comm']}/{label(end, 'tid')} waiting on a connection to "
                   f"{end['address']} (from {end['local']}): its other end was not traced")
    return out
