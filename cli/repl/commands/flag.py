"""flag: mark the data flag a thread polls (remembered as a rule)."""
from argus.cli.repl.registry import CommandParser, command, ReplUsageError
from argus.diagnose import hosts
from argus.diagnose import rules as R


def _addr(text):
    return int(text, 0)


parser = CommandParser("flag", "Mark the data flag the cursor's thread (or --vertex's) polls: an address, or "
                               "IMAGE and SYMBOL for bp_watch.  Remembered as a rule keyed by process and "
                               "thread name, so a later RepeatedYield of that thread gets the full bp_watch line.")
parser.add_argument("--addr", type=_addr, help="the flag's address (0x...)")
parser.add_argument("--image", type=str, help="the binary or library that holds the flag")
parser.add_argument("--symbol", type=str, help="the flag's symbol")
parser.add_argument("--vertex", type=int, help="a vertex of the polling thread (default: the cursor)")


@command(parser, category="annotate")
def run(ctx, args):
    g = ctx.g
    if args.addr is None and not args.symbol:
        raise ReplUsageError("flag: give --addr ADDR or --image IMAGE --symbol SYMBOL")
    v = ctx.check_vertex(args.vertex)
    u = int(g.seg.utid[v])
    pid = int(g.threads.pid[u])
    value = {"addr": args.addr} if args.symbol is None else {"image": args.image, "symbol": args.symbol}
    bid = R.build_id(g, pid)
    rule = R.data_flag_rule(g.process_name(pid), g.comm(u), value, {"build_id": bid} if bid else None)
    rid = ctx.add_rule(rule, "data_flag", v, {"key": rule["key"], "value": value})
    target = f"0x{args.addr:x}" if args.symbol is None else f"{args.image or 'IMAGE'} {args.symbol}"
    local, there = hosts.on_host(g, pid)
    ctx.out(f"rule: {g.process_name(pid)}:{g.comm(u)} polls data flag {target}; watch it with "
            f"bp_watch {local} {target if args.symbol else '--address ' + target}{there}"
            + ("" if rid is None else f" (undo: argus rules rm {rid})"))
