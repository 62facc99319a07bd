"""lldb: instruction-level evidence captured by `argus lldb-script` for a thread."""
from argus.cli.repl.registry import CommandParser, command
from argus.cli.repl.render import thread_label
from argus.diagnose import hosts
from argus.tracer.safe_files import UnsafePath
from argus.scripts.lldb.generate import render_text   # a list of lines

parser = CommandParser("lldb", "Show the lldb instruction traces (`argus lldb-script`) stored next to the "
                               "buffer for the thread of a vertex.")
parser.add_argument("id", nargs="?", type=int, help="vertex id (default: the cursor)")
parser.add_argument("--instructions", type=int, default=20, help="instructions to show per trace (default 20)")


@command(parser)
def run(ctx, args):

    v = ctx.check_vertex(args.id)
    u = int(ctx.g.seg.utid[v])
    pid, tid = int(ctx.g.threads.pid[u]), int(ctx.g.threads.tid[u])
    try:
        docs = ctx.lldb_results(u)
    except UnsafePath as e:
        ctx.out(str(e))
        return
    if not docs:
        (lpid, there), ltid = hosts.on_host(ctx.g, pid), hosts.on_host(ctx.g, tid)[0]
        ctx.out(f"no lldb trace for {thread_label(ctx.g, u)}: run `argus lldb-script --pid {lpid} --tid {ltid} "
                f"--function SYMBOL --run`{there} while it is alive")
        return
    for doc in docs:
        lines = render_text(doc, max_instructions=args.instructions)
        ctx.out(lines[0])
        ctx.console.print(_instructions_table(doc, args.instructions))
        for line in lines[1:]:
            if line.lstrip().startswith("library calls:"):
                ctx.out(line)


def _instructions_table(doc, limit):
    """The stepped instructions as a table: pc, function, instruction, memory read."""
    from rich.table import Table
    from rich.text import Text        # cells are plain text: "[rax]" is an operand, not rich markup
    t = Table(box=None, pad_edge=False)
    for col in ("#", "pc", "function", "instruction", "memory"):
        t.add_column(col)
    for i, r in enumerate((doc.get("instructions") or [])[:limit]):
        mem = " ".join(f"[0x{m['addr']:x}]={m['value']}" for m in r.get("mem") or []
                       if isinstance(m.get("addr"), int) and m.get("value") is not None)
        t.add_row(str(i), f"0x{r.get('pc', 0):x}", Text(str(r.get("function") or "?")),
                  Text(str(r.get("asm") or r.get("bytes") or "")), Text(mem))
    return t
