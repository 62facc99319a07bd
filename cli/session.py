"""Debugging sessions and rules, kept in SQLite.

One database per user (ARGUS_SESSION_DB, else $XDG_STATE_HOME/argus/
sessions.db, else ~/.local/state/argus/sessions.db), created 0600 in a 0700
directory: it holds names and addresses read from traces.  An existing
directory must be root's or ours and not writable by others, and the file a
regular file of ours, never a link (argus.tracer.safe_files).
  sessions     one row per `argus debug` run: the buffer, the hang (pid, tid,
               start, threshold), status open / done, the last report (JSON)
  answers      every answer in question order (kind, key, source): replayed
               by `--resume` and written out by `export --answers`
  annotations  what the user marked in the session (not-causal edges, data
               flags), with the rule each one produced
  rules        not_causal / data_flag rules (diagnose/rules.py) with their
               scope (build id), applied to every later session whatever its
               trace; `argus rules list|rm` (cli/cmd_rules.py) shows and
               removes them by id
Every change is committed at once (autocommit): a Ctrl-C, EOF or a killed
terminal loses nothing already answered.  Errors are SessionError (one line).
Rows are read as untrusted input (cli/bounded_json.py: bounded size and
depth, checked types): a damaged row is skipped with one warning line on
stderr, once per row, and never stops `debug` or `rules list`.
"""
import json
import os
import sqlite3
import sys
import time

from argus.cli import bounded_json

from argus.diagnose.chooser import QUESTION_KINDS
from argus.tracer import safe_files

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
  id INTEGER PRIMARY KEY, created REAL, updated REAL, buffer TEXT, pid INTEGER, tid INTEGER,
  hang_start_ns INTEGER, threshold_ns INTEGER, status TEXT DEFAULT 'open', report TEXT);
CREATE TABLE IF NOT EXISTS answers (
  session INTEGER, seq INTEGER, kind TEXT, answer TEXT, source TEXT, vertex INTEGER,
  PRIMARY KEY (session, seq));
CREATE TABLE IF NOT EXISTS annotations (
  id INTEGER PRIMARY KEY, session INTEGER, kind TEXT, target TEXT, detail TEXT, created REAL);
CREATE TABLE IF NOT EXISTS rules (
  id INTEGER PRIMARY KEY, kind TEXT, key TEXT, value TEXT, created REAL, session INTEGER,
  scope TEXT, UNIQUE (kind, key));
"""
# Columns added after the first release: (table, column, type), added to an
# older store on open.
MIGRATIONS = (("rules", "scope", "TEXT"),)
MAX_ROW_JSON = 4 << 20        # a report of a large slice is a few hundred KiB
MAX_ANSWERS_FILE = 1 << 20


class SessionError(Exception):
    pass


def default_path():
    p = os.environ.get("ARGUS_SESSION_DB")
    if p:
        return p
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "argus", "sessions.db")


class Store:
    ANSWER_TARGET = "answer"      # annotations.target of a rule an answer made (not a REPL mark)

    def __init__(self, path=None):
        self.path = path or default_path()
        try:
            # A directory of root's or ours that nobody else can write, and a
            # regular file of ours in it, never a link (safe_files): SQLite
            # then opens the path, and its journal beside it, in that directory.
            dir_fd, name = safe_files.open_parent(self.path, create=True)
            try:
                fd = safe_files.open_file(dir_fd, name, os.O_RDWR | os.O_CREAT, shown=self.path)
            finally:
                os.close(dir_fd)
            os.fchmod(fd, 0o600)
            os.close(fd)
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=10)
            self.db.executescript(SCHEMA)
            for table, col, typ in MIGRATIONS:
                if col not in [r[1] for r in self.db.execute(f"PRAGMA table_info({table})")]:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {col} {typ}")
        except (OSError, sqlite3.Error, safe_files.UnsafePath) as e:
            raise SessionError(f"cannot open the session store {self.path}: {e}")

    @property
    def history_path(self):
        return os.path.join(os.path.dirname(os.path.abspath(self.path)), "repl_history")

    def _x(self, sql, args=()):
        try:
            cur = self.db.execute(sql, args)
            # fetched here: a damaged page fails in the fetch, not the execute
            return _Result(cur.fetchall(), cur.lastrowid, cur.rowcount)
        except sqlite3.Error as e:
            raise SessionError(f"session store {self.path}: {e}")

    # --- sessions ---
    def create(self, buffer, hang, threshold_ns):
        now = time.time()
        cur = self._x("INSERT INTO sessions (created, updated, buffer, pid, tid, hang_start_ns, threshold_ns) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?)",
                      (now, now, os.path.abspath(buffer), hang.pid, hang.tid, hang.start_ns, threshold_ns))
        return cur.lastrowid

    def get(self, sid=None):
        """A session by id, else the most recently updated one."""
        cols = "id, buffer, pid, tid, hang_start_ns, threshold_ns, status, report"
        keys = ["id", "buffer", "pid", "tid", "hang_start_ns", "threshold_ns", "status", "report"]
        if sid is None:
            rows = self._x(f"SELECT {cols} FROM sessions ORDER BY updated DESC, id DESC")
        else:
            rows = self._x(f"SELECT {cols} FROM sessions WHERE id = ?", (sid,))
        for row in rows:
            s = dict(zip(keys, row))
            why = _bad_session(s)
            if why is None:
                return s
            if sid is not None:
                raise SessionError(f"session {sid} in {self.path} is damaged ({why})")
            self._warn("sessions", s["id"], why)       # the latest usable one, then
        if sid is None:
            raise SessionError(f"no session to resume in {self.path}")
        raise SessionError(f"no session {sid} in {self.path}")

    def _warn(self, table, rowid, why):
        """One warning line per damaged row and store."""
        warned = self.__dict__.setdefault("_warned", set())
        if (table, rowid) not in warned:
            warned.add((table, rowid))
            print(f"warning: skipping damaged row {rowid} of {table} in {self.path}: {why}", file=sys.stderr)

    def touch(self, sid):
        self._x("UPDATE sessions SET updated = ? WHERE id = ?", (time.time(), sid))

    def finish(self, sid, report=None, status="done"):
        self._x("UPDATE sessions SET updated = ?, status = ?, report = COALESCE(?, report) WHERE id = ?",
                (time.time(), status, None if report is None else json.dumps(report), sid))

    def save_report(self, sid, report):
        self._x("UPDATE sessions SET updated = ?, report = ? WHERE id = ?", (time.time(), json.dumps(report), sid))

    # --- answers ---
    def add_answer(self, sid, rec):
        seq = self._x("SELECT COALESCE(MAX(seq), -1) + 1 FROM answers WHERE session = ?", (sid,)).fetchone()[0]
        self._x("INSERT INTO answers (session, seq, kind, answer, source, vertex) VALUES (?, ?, ?, ?, ?, ?)",
                (sid, seq, rec["kind"], str(rec["answer"]), rec.get("source"), rec.get("vertex")))
        self.touch(sid)

    def answers(self, sid):
        rows = self._x("SELECT seq, kind, answer, source, vertex FROM answers WHERE session = ? ORDER BY seq",
                       (sid,)).fetchall()
        out = []
        for seq, k, a, s, v in rows:
            if not isinstance(k, str) or not isinstance(a, str) or len(a) > MAX_ROW_JSON \
                    or not (s is None or isinstance(s, str)) or not (v is None or _is_int(v)):
                self._warn("answers", f"{sid}/{seq}", "a field of the wrong type")
                continue
            out.append({"kind": k, "answer": a, "source": s, "vertex": v})
        return out

    def clear_answers(self, sid):
        """A new diagnosis of the session's hang: its answers, and the record
        of the rules they made, start again."""
        self._x("DELETE FROM answers WHERE session = ?", (sid,))
        self._x("DELETE FROM annotations WHERE session = ? AND target = ?", (sid, self.ANSWER_TARGET))

    def rules_made(self, sid):
        """{"kind", "key"} of the rules the session's answers made (an "n" to a
        weak edge), in order: a replay of those answers (--resume) makes them
        again rather than being answered by them."""
        return [{"kind": a["kind"], "key": a["detail"]} for a in self.annotations(sid)
                if a["target"] == self.ANSWER_TARGET and isinstance(a["detail"], dict)]

    # --- annotations and rules ---
    def annotate(self, sid, kind, target, detail=None):
        self._x("INSERT INTO annotations (session, kind, target, detail, created) VALUES (?, ?, ?, ?, ?)",
                (sid, kind, str(target), json.dumps(detail), time.time()))
        self.touch(sid)

    def annotations(self, sid):
        rows = self._x("SELECT id, kind, target, detail FROM annotations WHERE session = ? ORDER BY id",
                       (sid,)).fetchall()
        out = []
        for i, k, t, d in rows:
            try:
                detail = bounded_json.loads(d, MAX_ROW_JSON) if d else None
            except bounded_json.InputError as e:
                self._warn("annotations", i, f"detail: {e}")
                continue
            out.append({"kind": k, "target": t, "detail": detail})
        return out

    def add_rule(self, rule, sid=None):
        """Stores a rule (updating the value and scope of one of the same kind and
        key, which keeps its id); its id."""
        key = json.dumps(rule["key"], sort_keys=True)
        self._x("INSERT INTO rules (kind, key, value, created, session, scope) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (kind, key) DO UPDATE SET value = excluded.value, scope = excluded.scope",
                (rule["kind"], key, json.dumps(rule["value"]), time.time(), sid,
                 json.dumps(rule.get("scope") or {})))
        return self._x("SELECT id FROM rules WHERE kind = ? AND key = ?", (rule["kind"], key)).fetchone()[0]

    def rules(self):
        rows = self._x("SELECT id, kind, key, value, scope, created, session FROM rules ORDER BY id").fetchall()
        out = []
        for i, k, key, v, sc, c, ss in rows:
            try:
                rule = {"id": i, "kind": k, "key": bounded_json.loads(key, MAX_ROW_JSON),
                        "value": bounded_json.loads(v, MAX_ROW_JSON),
                        "scope": bounded_json.loads(sc, MAX_ROW_JSON) if sc else {}, "created": c, "session": ss}
            except bounded_json.InputError as e:
                self._warn("rules", i, str(e))
                continue
            why = _bad_rule(rule)
            if why:
                self._warn("rules", i, why)
                continue
            out.append(rule)
        return out

    def remove_rule(self, rid):
        """Removes rule rid; False when there is none."""
        return self._x("DELETE FROM rules WHERE id = ?", (int(rid),)).rowcount > 0

    def close(self):
        try:
            self.db.close()
        except sqlite3.Error:
            pass


def write_answers_file(path, answers, meta=None, rules_made=()):
    """The `--answers` file: {"schema": "argus.answers/1", "answers": [...],
    "rules_made": [...]}: every answer to a question, in order, and the
    rules those answers made ("n" to a weak edge), so that a replay in the
    same store, where the rule now exists, is still answered by the answer
    that made it rather than by the rule (which would leave the recorded
    answer unused and the rest of the recording off by one).  Raises
    ArgusError (one line) when it cannot be written."""
    data = {"schema": "argus.answers/1", **(meta or {}),
            "answers": [{"kind": a["kind"], "answer": str(a["answer"])} for a in answers
                        if a["kind"] in QUESTION_KINDS],
            "rules_made": [{"kind": r["kind"], "key": r["key"]} for r in rules_made]}
    safe_files.write_output(path, json.dumps(data, indent=1) + "\n")   # a new 0600 file, never a planted one


def read_answers_file(path):
    """The answers of an `--answers` file (read_answers_doc)."""
    return read_answers_doc(path)[0]


def read_answers_doc(path):
    """(answers, rules_made) of an `--answers` file: a regular file of at
    most MAX_ANSWERS_FILE bytes (cli/bounded_json.py); rules_made are
    {"kind", "key"} of the rules its answers made (empty in files written
    before there was such a list).  SessionError (one line)."""
    try:
        text = bounded_json.read_regular_file(path, MAX_ANSWERS_FILE)
    except bounded_json.InputError as e:
        raise SessionError(f"cannot read answers file {path}: {e}")
    try:
        data = bounded_json.loads(text, MAX_ANSWERS_FILE)
    except bounded_json.InputError as e:
        raise SessionError(f"{path} is not an answers file ({e})")
    if not isinstance(data, dict) or data.get("schema") != "argus.answers/1" \
            or not isinstance(data.get("answers"), list) \
            or not all(isinstance(a, dict) and isinstance(a.get("kind"), str) and _is_scalar(a.get("answer"))
                       for a in data["answers"]) \
            or not isinstance(data.get("rules_made", []), list) \
            or not all(isinstance(r, dict) and isinstance(r.get("kind"), str) and isinstance(r.get("key"), dict)
                       for r in data.get("rules_made", [])):
        raise SessionError(f"{path} is not an answers file (schema argus.answers/1)")
    return ([{"kind": a["kind"], "answer": str(a["answer"])} for a in data["answers"]],
            [{"kind": r["kind"], "key": r["key"]} for r in data.get("rules_made", [])])


class _Result:
    """A cursor's rows, read in full, with what callers use of the cursor."""

    def __init__(self, rows, lastrowid, rowcount):
        self.rows, self.lastrowid, self.rowcount = rows, lastrowid, rowcount

    def fetchone(self):
        return self.rows[0] if self.rows else None

    def fetchall(self):
        return self.rows

    def __iter__(self):
        return iter(self.rows)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_scalar(v):
    return isinstance(v, (str, int, float)) and not isinstance(v, bool)


def _bad_session(s):
    """Why a sessions row cannot be used, or None."""
    if not isinstance(s["buffer"], str):
        return "buffer is not text"
    for k in ("pid", "tid", "hang_start_ns", "threshold_ns"):
        if not _is_int(s[k]) or not 0 <= s[k] < 1 << 64:
            return f"{k} is not a count"
    if s["report"] is not None and not isinstance(s["report"], str):
        return "report is not text"
    return None


def _bad_rule(rule):
    """Why a decoded rules row cannot be applied, or None: the types that
    diagnose/rules.py relies on (it reads key fields with .get)."""
    k, v, scope = rule["key"], rule["value"], rule["scope"]
    if not isinstance(rule["kind"], str):
        return "kind is not text"
    if not (rule["created"] is None or isinstance(rule["created"], (int, float))) \
            or not (rule["session"] is None or _is_int(rule["session"])):
        return "created or session is not a number"
    if not isinstance(k, dict):
        return "key is not an object"
    if not isinstance(scope, dict) or not isinstance(scope.get("build_id") or "", str):
        return "scope is not an object"
    if rule["kind"] == "data_flag" and v is not None:
        if not isinstance(v, dict):
            return "value is not an object"
        if not (_is_int(v.get("addr", 0)) and isinstance(v.get("symbol") or "", str)
                and isinstance(v.get("image") or "", str)):
            return "value has a field of the wrong type"
    return None
