"""Mutation fuzzing of the Python readers of untrusted input files: the
`--answers` file (cli/session.py read_answers_file) and the session database
(cli/session.py Store: sessions, answers, annotations, rules rows, and the
database file itself).

Seeded and bounded: real seeds (an answers file written by
write_answers_file, a store filled through Store's own methods), mutated by
a random.Random(seed) (byte flips, splices, truncation, deep nesting, huge
and wrongly typed values), a fixed iteration count and a time bound.  Each
reader may return or raise SessionError (the one-line error); anything else
is a crash, printed with its input and counted.  A few mutated stores also
go through the real `argus rules list` command: no traceback on stderr.

  python3 tests/fuzz/fuzz_inputs.py [--iterations N] [--seconds S] [--seed K]
Exit 0 with "0 crashes" on the last line, else 1.
"""
import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback

from argus.cli.session import SessionError, Store, read_answers_file, write_answers_file
from argus.diagnose.hangs import Hang

NASTY = [b"[" * 100_000, b"{" * 70, b"\xff\xfe", b"\x00", b"null", b"1e999", b'"\\ud800"', b"-0",
         b'{"schema": "argus.answers/1", "answers": ', b'{"kind": "weak", "answer": ', b"]", b"}", b",",
         b'"' + b"a" * 5000 + b'"', b"true", b"[[[[[[[[[[]]]]]]]]]]", b"9" * 400]


def mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        op = rng.randrange(6)
        pos = rng.randint(0, len(data))
        if op == 0 and data:                       # flip a byte
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif op == 1:                              # insert a nasty token
            data[pos:pos] = rng.choice(NASTY)
        elif op == 2:                              # truncate
            del data[pos:]
        elif op == 3 and data:                     # delete a span
            del data[pos:pos + rng.randint(1, 32)]
        elif op == 4:                              # duplicate a span
            data[pos:pos] = data[pos:pos + rng.randint(1, 64)]
        else:                                      # wrap in deep nesting
            n = rng.choice((10, 63, 64, 65, 1000, 200_000))
            data = bytearray(b"[" * n) + data + bytearray(b"]" * n)
    return bytes(data)


def seed_answers(path):
    write_answers_file(path, [{"kind": "weak", "answer": "f"}, {"kind": "baseline", "answer": 2},
                              {"kind": "go_on", "answer": "n"}], {"pid": 7, "tid": 8})
    with open(path, "rb") as f:
        return f.read()


def seed_store(path):
    st = Store(path)
    sid = st.create(path + ".argus", Hang(100, 101, 0, "wait", 9, 9, 5_000, 9_000, False, None), 2_000_000_000)
    st.add_answer(sid, {"kind": "weak", "answer": "f", "source": "user", "vertex": 3})
    st.annotate(sid, "not_causal", 17, {"edge_type": "wakeup"})
    st.add_rule({"kind": "not_causal", "key": {"edge_type": "wakeup", "src_thread": "a", "src_process": "b",
                                               "dst_thread": "c", "dst_process": "d", "wait": "futex"},
                 "value": None, "scope": {"build_id": "ab12"}}, sid)
    st.add_rule({"kind": "data_flag", "key": {"process": "p", "thread": "t"},
                 "value": {"addr": 4096, "symbol": "flag", "image": "/bin/x"}}, sid)
    st.finish(sid, {"schema": "argus.diagnosis/1", "path": [1, 2, 3]})
    st.close()


COLUMNS = {"sessions": ("buffer", "pid", "tid", "hang_start_ns", "threshold_ns", "status", "report"),
           "answers": ("kind", "answer", "source", "vertex"),
           "annotations": ("kind", "target", "detail"),
           "rules": ("kind", "key", "value", "scope", "session")}


def random_value(rng, old):
    choice = rng.randrange(7)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice((-1, 0, (1 << 63) - 1, -(1 << 63), 3.5))
    if choice == 2:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 16)))      # a blob
    if choice == 3:
        return rng.choice(NASTY).decode("latin-1")
    if isinstance(old, str) and old:
        return mutate(rng, old.encode()).decode("utf-8", "replace")
    return json.dumps(rng.choice(([], {}, "x", {"addr": "x"}, {"a": [1, {"b": None}]}, [[[]]])))


def damage_store(rng, path):
    con = sqlite3.connect(path)
    for _ in range(rng.randint(1, 4)):
        table = rng.choice(list(COLUMNS))
        col = rng.choice(COLUMNS[table])
        rows = [r[0] for r in con.execute(f"SELECT rowid FROM {table}")]
        if rows:
            old = con.execute(f"SELECT {col} FROM {table} WHERE rowid = ?", (rows[0],)).fetchone()[0]
            con.execute(f"UPDATE {table} SET {col} = ? WHERE rowid = ?",
                        (random_value(rng, old), rng.choice(rows)))
    con.commit()
    con.close()
    if rng.random() < 0.1:                         # the file itself
        with open(path, "r+b") as f:
            data = f.read()
            f.seek(0)
            f.write(mutate(rng, data)[:len(data) + 4096])
            f.truncate()


def read_all(path):
    st = Store(path)
    try:
        for r in st.rules():
            from argus.diagnose.rules import RuleSet, describe
            describe(r)
            RuleSet([r])
        try:
            s = st.get()
            st.answers(s["id"])
            st.annotations(s["id"])
        except SessionError:
            pass
    finally:
        st.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=3000)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--cli-runs", type=int, default=8)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="argus-fuzz-inputs-")
    os.chmod(work, 0o700)
    crashes = runs = 0
    deadline = time.monotonic() + args.seconds
    sys.setrecursionlimit(1000)
    try:
        answers_seed = seed_answers(os.path.join(work, "seed.json"))
        db_seed = os.path.join(work, "seed.db")
        seed_store(db_seed)
        case = os.path.join(work, "case.json")
        db = os.path.join(work, "case.db")
        devnull = open(os.devnull, "w")
        for i in range(args.iterations):
            if time.monotonic() > deadline:
                break
            runs += 1
            data = mutate(rng, answers_seed)
            with open(case, "wb") as f:
                f.write(data)
            try:
                read_answers_file(case)
            except SessionError:
                pass
            except BaseException:
                crashes += 1
                print(f"crash in read_answers_file on {data[:200]!r}:\n{traceback.format_exc()}", file=sys.stderr)
            if i % 4 == 0:
                shutil.copy(db_seed, db)
                os.chmod(db, 0o600)
                damage_store(rng, db)
                stderr, sys.stderr = sys.stderr, devnull      # the warning lines
                try:
                    read_all(db)
                except SessionError:
                    pass
                except BaseException:
                    sys.stderr = stderr
                    crashes += 1
                    print(f"crash reading a damaged store:\n{traceback.format_exc()}", file=sys.stderr)
                finally:
                    sys.stderr = stderr
        for k in range(args.cli_runs):                # the real command on damaged stores
            shutil.copy(db_seed, db)
            os.chmod(db, 0o600)
            damage_store(rng, db)
            proc = subprocess.run([sys.executable, "-m", "argus.cli", "rules", "list"], capture_output=True,
                                  text=True, timeout=60, env=dict(os.environ, ARGUS_SESSION_DB=db))
            runs += 1
            if "Traceback" in proc.stderr or proc.returncode not in (0, 1):
                crashes += 1
                print(f"`argus rules list` on a damaged store:\n{proc.stderr}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"fuzz: inputs: {runs} executions (seed {args.seed}), {crashes} crashes, {crashes} tracebacks")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
