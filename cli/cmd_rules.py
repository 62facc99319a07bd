"""`argus rules list|rm`: the rules earlier debugging sessions left.

Rules (diagnose/rules.py) live in the session store (cli/session.py) and
apply to every later `argus debug`, whatever the mode; a report lists the
ones that fired with their id.  `list` shows every rule: id, kind, what it
says (names, edge type, wait kind; the flag), its build-id scope, and the
session that made it; `rm ID...` removes rules by id (an unknown id is an
error and removes nothing).
"""
import json
import sys
import time

from argus.cli.common import ArgusError
from argus.diagnose.rules import describe


def register(sub):
    p = sub.add_parser("rules", help="list or remove the rules earlier debugging sessions learned")
    rs = p.add_subparsers(dest="rules_command", metavar="ACTION")
    rs.required = True
    lp = rs.add_parser("list", help="every rule: id, what it says, its scope")
    lp.add_argument("--json", action="store_true", help="print JSON")
    lp.set_defaults(func=run_list)
    rp = rs.add_parser("rm", help="remove rules by id (as `rules list` and reports show them)")
    rp.add_argument("ids", nargs="+", type=int, metavar="ID")
    rp.set_defaults(func=run_rm)


def _store():
    # local for start-up time: sqlite3, only for the commands that keep answers
    from argus.cli.session import Store, SessionError
    try:
        return Store()
    except SessionError as e:
        raise ArgusError(str(e))


def run_list(args):
    # local for start-up time: sqlite3, only for the commands that keep answers
    from argus.cli.session import SessionError
    store = _store()
    try:
        rules = store.rules()
    except SessionError as e:
        raise ArgusError(str(e))
    finally:
        store.close()
    if args.json:
        print(json.dumps({"store": store.path, "rules": rules}))
        return 0
    if not rules:
        print(f"no rules in {store.path}")
        return 0
    for r in rules:
        made = time.strftime("%Y-%m-%d %H:%M", time.localtime(r["created"])) if r.get("created") else "?"
        sess = f", session {r['session']}" if r.get("session") is not None else ""
        print(f"{r['id']:>4}  {r['kind']:<10}  {describe(r)}  ({made}{sess})")
    print(f"({len(rules)} rule(s) in {store.path}; argus rules rm ID removes one)")
    return 0


def run_rm(args):
    # local for start-up time: sqlite3, only for the commands that keep answers
    from argus.cli.session import SessionError
    store = _store()
    try:
        have = {r["id"] for r in store.rules()}
        missing = [i for i in args.ids if i not in have]
        if missing:
            raise ArgusError(f"no rule {', '.join(map(str, missing))} in {store.path} (argus rules list)")
        for i in args.ids:
            store.remove_rule(i)
    except SessionError as e:
        raise ArgusError(str(e))
    finally:
        store.close()
    print(f"removed rule(s) {', '.join(map(str, args.ids))}", file=sys.stdout)
    return 0
