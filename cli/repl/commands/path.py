"""path: the causal chain of the last diagnosis, and its root causes."""
from rich.table import Table

from argus.cli.repl.registry import CommandParser, command
from argus.diagnose.hosts import label
from argus.diagnose.report import fmt_rel, evidence_text

parser = CommandParser("path", "Show the chain of the last diagnosis (spinning vertex first) and its root causes.")
parser.add_argument("--depth", type=int, help="only elements of this recursion depth")


@command(parser, aliases=("p",))
def run(ctx, args):
    j = ctx.report
    if j is None:
        ctx.out("no diagnosis yet: run diagnose")
        return
    t0 = j["spinning"]["start_ns"]
    t = Table(box=None, pad_edge=False)
    for col in ("#", "vertex", "thread", "process", "start", "end", "block type", "edge in", "role"):
        t.add_column(col)
    for i, p in enumerate(j["path"]):
        if args.depth is not None and p["depth"] != args.depth:
            continue
        e = p["edge_in"]
        t.add_row(str(i), str(p["vertex"]), f"{p['comm']}/{label(p, 'tid')}", f"{p['process']}/{label(p)}",
                  fmt_rel(p["start_ns"] - t0), fmt_rel(p["end_ns"] - t0), p["block_type"],
                  "-" if e is None else e["type"] + (" (weak)" if e["weak"] else ""),
                  p["role"] + (f" d{p['depth']}" if p["depth"] else ""))
    ctx.console.print(t)
    for r in j["root_causes"]:
        ctx.out(f"{'*' if r['primary'] else ' '} depth {r['depth']} {r['comm']}/{label(r, 'tid')} "
                f"{r['block_type']} (vertex {r['vertex']}): {r['why']}")
        if r.get("evidence"):
            ctx.out(f"    evidence: {evidence_text(r['evidence'])}")
        if r.get("advice"):
            ctx.out(f"    next step: {r['advice']}")
    m = j.get("metrics") or {}
    ctx.out(f"queries {j['queries']}, path length {m.get('path_len')} (auto: {m.get('auto_path_len')})")
    for f in j.get("rules_fired") or ():
        ctx.out(f"rule {f['id'] if f.get('id') is not None else '(new)'} applied: {f['rule']}: {f['effect']}"
                + (f" (undo: {f['undo']})" if f.get("undo") else ""))
