"""save_graph(g, path) / load_graph(path): a built EventGraph in SQLite, so a
session reopens without re-reading (or re-building) the trace.

Tables (one column per numpy column; integers stay integers):
  meta        key, value (JSON): format version, trace bounds, stats, processes
  vertices    id + every seg column (utid, start, end, wait_*, split_kind, gap, ...)
  edges       id + every edge column (src, dst, type, weak, ts, ...)
  threads     utid + tid, pid, comm, lifetimes, parent
  events      the semantic events: every decoded row (syscalls with their
              arguments, wakeups, messages with their peers, stacks and names
              as the rows carry them) with `vertex`, the segment owning it
              (-1: a row no thread owns, e.g. a wakeup from the idle task)
  running, runnable, yields, flags   thread_state intervals, yields, data flags
  frames, strings   the trace's side arrays: USER_STACK rows (events) index
              frames (obj = first, aux = count), MAPPING rows index strings

Algorithm: columns go through executemany over zipped column lists (the
standard sqlite3 module; one transaction); load reads each table back with
one SELECT ordered by id and rebuilds the numpy columns with their dtypes.
Every numeric column is also stored as raw bytes (table `columns`, in
256 MiB parts), which load_graph reads with np.frombuffer: reopening costs a
file read, not a Python object per value (the row tables are for SQL queries).
The CSR indexes are recomputed by EventGraph.  A file that is not such a
database, or of another format version, raises StorageError (one line).
"""
import json
import os
import sqlite3

import numpy as np

from argus.tracer import safe_files, schema
from argus.graphbuild.graph import EventGraph, Table
from argus.graphbuild.sysroles import SyscallRoles

FORMAT_VERSION = 1


class StorageError(Exception):
    """A graph database cannot be written or read (one line)."""


def _sql_type(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "iub":
        return "INTEGER"
    if dtype.kind == "f":
        return "REAL"
    if dtype.kind == "S":
        return "BLOB"
    return "TEXT"


def _pyvals(col):
    col = np.asarray(col)
    if col.dtype.kind == "u" and col.dtype.itemsize == 8:
        # SQLite integers are signed 64-bit: store the two's complement
        return col.view(np.int64).tolist()
    if col.dtype.kind == "b":
        return col.astype(np.int64).tolist()
    if col.dtype.kind == "O":
        return [str(x) for x in col.tolist()]
    return col.tolist()


BLOB_PART = 256 << 20   # SQLite's default maximum BLOB is 1e9 bytes


def _write_blobs(con, table, columns):
    """Each numeric column's bytes, in parts: what load_graph reads (fast)."""
    for name, col in columns.items():
        col = np.ascontiguousarray(col)
        if col.dtype.kind == "O":
            continue
        data = memoryview(col.view(np.uint8).reshape(-1)) if col.size else memoryview(b"")
        for part, off in enumerate(range(0, max(len(data), 1), BLOB_PART)):
            con.execute("INSERT INTO columns VALUES (?, ?, ?, ?, ?)",
                        (table, name, col.dtype.str, part, bytes(data[off:off + BLOB_PART])))


def _write_table(con, name, columns, id_name="id"):
    _write_blobs(con, name, columns)
    names = list(columns)
    cols_sql = ", ".join(f'"{n}" {_sql_type(np.asarray(columns[n]).dtype)}' for n in names)
    con.execute(f'CREATE TABLE "{name}" ({id_name} INTEGER PRIMARY KEY, {cols_sql})')
    n = len(next(iter(columns.values()))) if names else 0
    data = [range(n)] + [_pyvals(columns[c]) for c in names]
    marks = ", ".join("?" * (len(names) + 1))
    con.executemany(f'INSERT INTO "{name}" VALUES ({marks})', zip(*data))
    return {c: np.asarray(columns[c]).dtype.str for c in names}


def _read_table(con, name, dtypes, id_name="id"):
    out = {}
    rest = {}
    for n, dt in dtypes.items():
        parts = con.execute("SELECT data FROM columns WHERE tbl = ? AND name = ? ORDER BY part",
                            (name, n)).fetchall()
        if parts:
            out[n] = np.frombuffer(b"".join(p[0] for p in parts), dtype=np.dtype(dt)).copy()
        else:
            rest[n] = dt
    out.update(_read_rows(con, name, rest, id_name))
    return {n: out[n] for n in dtypes}


def _read_rows(con, name, dtypes, id_name):
    names = list(dtypes)
    if not names:
        return {}
    cur = con.execute(f'SELECT {", ".join(chr(34) + n + chr(34) for n in names)} FROM "{name}" ORDER BY {id_name}')
    rows = cur.fetchall()
    out = {}
    for k, n in enumerate(names):
        dt = np.dtype(dtypes[n])
        vals = [r[k] for r in rows]
        if dt.kind == "O":
            out[n] = np.array(vals, dtype=object) if vals else np.zeros(0, dtype=object)
        elif dt.kind == "u" and dt.itemsize == 8:
            out[n] = np.array(vals, dtype=np.int64).view(np.uint64)
        else:
            out[n] = np.array(vals, dtype=dt) if vals else np.zeros(0, dtype=dt)
    return out


def _row_owner(g):
    """Per row, the segment whose [row_lo, row_hi) holds it in thread_rows, else -1."""
    owner = np.full(len(g.rows), -1, np.int64)
    if not len(g.seg) or not len(g.thread_rows):
        return owner
    order = np.argsort(g.seg.row_lo, kind="stable")
    lo, hi = g.seg.row_lo[order], g.seg.row_hi[order]
    pos = np.arange(len(g.thread_rows))
    k = np.searchsorted(lo, pos, side="right") - 1
    ok = (k >= 0) & (pos < hi[np.maximum(k, 0)])
    owner[g.thread_rows[pos[ok]]] = order[k[ok]]
    return owner


def save_graph(g, path, source=None):
    """Writes g to a new SQLite file at path (replaced if it exists), mode 0600.
    SQLite writes only by path (and adds a journal beside it), and argus runs
    as root next to paths other users may control: the database is built in
    a fresh 0700 directory of our own (mkdtemp), then copied through its
    descriptor into tracer/safe_files.py's writer (a new file renamed over
    path).  Raises StorageError, or ArgusError when path is refused."""
    import shutil
    import tempfile

    try:
        with tempfile.TemporaryDirectory(prefix="argus-graph-") as d:
            db = os.path.join(d, "graph.db")
            _fill_database(g, db, source)
            with open(db, "rb") as src, safe_files.output_file(path) as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    except (OSError, sqlite3.Error) as e:
        raise StorageError(f"cannot save the graph to {path}: {e}") from None


def _fill_database(g, db, source):
    """g as the tables of a new SQLite database at db (a private path)."""
    con = sqlite3.connect(db)
    try:
        with con:
            con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
            con.execute("CREATE TABLE columns (tbl TEXT, name TEXT, dtype TEXT, part INTEGER, data BLOB, "
                        "PRIMARY KEY (tbl, name, part))")
            schema_of = {}
            schema_of["vertices"] = _write_table(con, "vertices", g.seg.columns())
            schema_of["edges"] = _write_table(con, "edges", g.edges.columns())
            schema_of["threads"] = _write_table(con, "threads", g.threads.columns(), "utid")
            owner = _row_owner(g)
            thread_of_row = np.full(len(g.rows), -1, np.int64)
            thread_of_row[g.thread_rows] = np.repeat(np.arange(len(g.threads)), np.diff(g.thread_rows_ptr))
            ev = {n: g.rows[n] for n in schema.ROW_DTYPE.names if n != "pad"}
            ev["vertex"] = owner
            ev["utid"] = thread_of_row
            schema_of["events"] = _write_table(con, "events", ev, "row")
            schema_of["running"] = _write_table(con, "running", g.running.columns())
            schema_of["runnable"] = _write_table(con, "runnable", g.runnable.columns())
            schema_of["yields"] = _write_table(con, "yields", g.yields.columns())
            schema_of["flags"] = _write_table(con, "flags", g.flags.columns())
            frames = np.asarray(g.frames, np.uint64)
            schema_of["frames"] = _write_table(con, "frames", {"pc": frames})
            con.execute("CREATE TABLE strings (id INTEGER PRIMARY KEY, data BLOB)")
            con.execute("INSERT INTO strings VALUES (0, ?)", (bytes(g.strings),))
            con.execute("CREATE INDEX events_vertex ON events(vertex)")
            con.execute("CREATE INDEX edges_dst ON edges(dst)")
            meta = {
                "format": FORMAT_VERSION, "trace_start": g.trace_start, "trace_end": g.trace_end,
                "stats": g.stats, "processes": {str(k): v for k, v in g.processes.items()},
                "columns": schema_of, "source": source or "",
            }
            con.executemany("INSERT INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in meta.items()])
    finally:
        con.close()


def load_graph(path):
    """Reads a graph saved by save_graph.  Returns an EventGraph."""
    if not os.path.exists(path):
        raise StorageError(f"no graph database at {path}")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as e:
        raise StorageError(f"cannot open {path}: {e}") from None
    try:
        try:
            meta = {k: json.loads(v) for k, v in con.execute("SELECT key, value FROM meta")}
        except (sqlite3.Error, ValueError) as e:
            raise StorageError(f"{path}: not an Argus graph database ({e})") from None
        if meta.get("format") != FORMAT_VERSION:
            raise StorageError(f"{path}: graph format {meta.get('format')}, this build reads {FORMAT_VERSION}")
        cols = meta["columns"]
        try:
            seg = _read_table(con, "vertices", cols["vertices"])
            edges = _read_table(con, "edges", cols["edges"])
            threads = _read_table(con, "threads", cols["threads"], "utid")
            ev = _read_table(con, "events", cols["events"], "row")
            running = _read_table(con, "running", cols["running"])
            runnable = _read_table(con, "runnable", cols["runnable"])
            yields = _read_table(con, "yields", cols["yields"])
            flags = _read_table(con, "flags", cols["flags"])
            frames = _read_table(con, "frames", cols["frames"]).get("pc", np.zeros(0, np.uint64))
            blob = con.execute("SELECT data FROM strings WHERE id = 0").fetchone()
        except (sqlite3.Error, KeyError, ValueError) as e:
            raise StorageError(f"{path}: damaged graph database ({e})") from None
    finally:
        con.close()
    n = len(ev.get("ts_ns", ()))
    rows = schema.empty_rows(n)
    for name in schema.ROW_DTYPE.names:
        if name in ev:
            rows[name] = ev[name]
    utid_of_row = ev.get("utid", np.zeros(0, np.int64))
    owned = np.flatnonzero(utid_of_row >= 0)
    thread_rows = owned[np.argsort(utid_of_row[owned], kind="stable")].astype(np.int64)
    nthreads = len(threads.get("tid", ()))
    ptr = np.zeros(nthreads + 1, np.int64)
    np.cumsum(np.bincount(utid_of_row[owned], minlength=nthreads), out=ptr[1:])
    processes = {int(k): v for k, v in meta["processes"].items()}
    g = EventGraph(rows=rows, trace_start=meta["trace_start"], trace_end=meta["trace_end"],
                      threads=Table(**threads), processes=processes, seg=Table(**seg), thread_rows=thread_rows,
                      thread_rows_ptr=ptr, edges=Table(**edges), running=Table(**running),
                      runnable=Table(**runnable), yields=Table(**yields), flags=Table(**flags),
                      stats=meta["stats"], roles=SyscallRoles().learn(rows), frames=np.asarray(frames, np.uint64),
                      strings=bytes(blob[0]) if blob and blob[0] is not None else b"")
    return g
