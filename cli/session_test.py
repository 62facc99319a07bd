"""The SQLite session store and the answers file."""
import json
import os
import stat

import pytest

from argus.cli.session import Store, SessionError, write_answers_file, read_answers_file
from argus.diagnose.hangs import Hang


def hang():
    return Hang(100, 100, 0, "wait", 9, 9, 5_000, 9_000, False, None)


def test_store_is_private_and_keeps_everything(tmp_path):
    db = tmp_path / "state" / "argus" / "sessions.db"
    st = Store(str(db))
    assert stat.S_IMODE(os.stat(db).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(db.parent).st_mode) == 0o700
    sid = st.create(str(tmp_path / "t.argus"), hang(), 2_000_000_000)
    st.add_answer(sid, {"kind": "weak", "answer": "f", "source": "user", "vertex": 3})
    st.add_answer(sid, {"kind": "go_on", "answer": "n", "source": "user", "vertex": 4})
    st.annotate(sid, "not_causal", 17, {"edge_type": "wakeup"})
    st.add_rule({"kind": "not_causal", "key": {"a": 1}, "value": None}, sid)
    st.add_rule({"kind": "not_causal", "key": {"a": 1}, "value": None}, sid)      # once
    st.finish(sid, {"schema": "argus.diagnosis/1"})
    st.close()
    st = Store(str(db))                                                             # reopened: all there
    s = st.get()
    assert (s["id"], s["pid"], s["tid"], s["hang_start_ns"], s["status"]) == (sid, 100, 100, 5_000, "done")
    assert json.loads(s["report"]) == {"schema": "argus.diagnosis/1"}
    assert [(a["kind"], a["answer"]) for a in st.answers(sid)] == [("weak", "f"), ("go_on", "n")]
    (r,) = st.rules()
    assert (r["id"], r["kind"], r["key"], r["value"], r["scope"], r["session"]) == \
        (1, "not_causal", {"a": 1}, None, {}, sid)
    assert st.annotations(sid)[0]["kind"] == "not_causal"
    st.clear_answers(sid)
    assert st.answers(sid) == []
    assert st.remove_rule(1) and not st.remove_rule(1) and st.rules() == []
    with pytest.raises(SessionError, match="no session 99"):
        st.get(99)


def test_empty_store_has_nothing_to_resume(tmp_path):
    with pytest.raises(SessionError, match="no session to resume"):
        Store(str(tmp_path / "s.db")).get()


def test_unusable_store_is_one_line(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(SessionError, match="cannot open the session store"):
        Store(str(tmp_path / "f" / "s.db"))


def test_answers_file_roundtrip_and_bad_files(tmp_path):
    p = tmp_path / "a.json"
    write_answers_file(str(p), [{"kind": "weak", "answer": "f"}, {"kind": "memo", "answer": "f"},
                                {"kind": "baseline", "answer": 2}], {"pid": 1})
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o600
    assert read_answers_file(str(p)) == [{"kind": "weak", "answer": "f"}, {"kind": "baseline", "answer": "2"}]
    for text in ("nope", '{"schema": "x", "answers": []}', '{"schema": "argus.answers/1", "answers": [1]}'):
        p.write_text(text)
        with pytest.raises(SessionError, match="not an answers file"):
            read_answers_file(str(p))
    with pytest.raises(SessionError, match="cannot read"):
        read_answers_file(str(tmp_path / "missing.json"))


def test_store_of_an_older_release_gains_the_scope_column(tmp_path):
    import sqlite3
    db = tmp_path / "old.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE rules (id INTEGER PRIMARY KEY, kind TEXT, key TEXT, value TEXT, created REAL, "
                "session INTEGER, UNIQUE (kind, key))")
    con.execute("INSERT INTO rules (kind, key, value) VALUES ('not_causal', '{\"a\": 1}', 'null')")
    con.commit()
    con.close()
    st = Store(str(db))
    assert [(r["id"], r["scope"]) for r in st.rules()] == [(1, {})]
    assert st.add_rule({"kind": "data_flag", "key": {"b": 2}, "value": {"addr": 1}, "scope": {"build_id": "ab"}}) == 2
    assert st.rules()[1]["scope"] == {"build_id": "ab"}


def test_answers_file_is_bounded_and_regular(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    deep = tmp_path / "deep.json"
    deep.write_text('{"schema": "argus.answers/1", "answers": ' + "[" * 200_000 + "]" * 200_000 + "}")
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (2 << 20))
    nested = tmp_path / "nested.json"
    nested.write_text('{"schema": "argus.answers/1", "answers": [{"kind": "weak", "answer": [[[]]]}]}')
    cases = ((fifo, "cannot read answers file .*: not a regular file"),
             ("/dev/zero", "not a regular file"),
             (deep, "not an answers file \\(nested deeper than 64 levels\\)"),
             (big, "larger than"),
             (nested, "not an answers file"))
    for path, why in cases:
        with pytest.raises(SessionError, match=why):
            read_answers_file(str(path))


def _damage(db, sql, *args):
    import sqlite3
    con = sqlite3.connect(db)
    con.execute(sql, args)
    con.commit()
    con.close()


def test_damaged_rows_are_skipped_with_one_warning_each(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    st = Store(db)
    old = st.create(str(tmp_path / "t.argus"), hang(), 2_000_000_000)
    sid = st.create(str(tmp_path / "t.argus"), hang(), 2_000_000_000)
    st.add_answer(sid, {"kind": "weak", "answer": "f"})
    st.add_answer(sid, {"kind": "go_on", "answer": "n"})
    st.annotate(sid, "not_causal", 17, {"edge_type": "wakeup"})
    st.annotate(sid, "data_flag", 18, {"x": 1})
    good = st.add_rule({"kind": "data_flag", "key": {"process": "p", "thread": "t"}, "value": {"addr": 16}})
    for k in ("a", "b", "c", "d"):
        st.add_rule({"kind": "not_causal", "key": {k: 1}, "value": None})
    st.close()
    _damage(db, "UPDATE rules SET value = '{' WHERE id = 2")                                 # not JSON
    _damage(db, "UPDATE rules SET key = ? WHERE id = 3", "[" * 100_000 + "]" * 100_000)      # too deep
    _damage(db, "UPDATE rules SET scope = '[1]' WHERE id = 4")                               # wrong type
    _damage(db, "UPDATE rules SET kind = 'data_flag', value = '{\"addr\": \"x\"}' WHERE id = 5")
    _damage(db, "UPDATE annotations SET detail = 'nope' WHERE target = '18'")
    _damage(db, "UPDATE answers SET answer = x'00ff' WHERE seq = 1")                          # a blob
    _damage(db, "UPDATE sessions SET pid = 'one', updated = 1e12 WHERE id = ?", old)         # newest, damaged
    st = Store(db)
    for _ in range(2):                                                  # warned once per row
        assert [r["id"] for r in st.rules()] == [good]
        assert [a["kind"] for a in st.annotations(sid)] == ["not_causal"]
        assert [a["kind"] for a in st.answers(sid)] == ["weak"]
        assert st.get()["id"] == sid                                    # the latest usable session
    with pytest.raises(SessionError, match=f"session {old} in .* is damaged \\(pid is not a count\\)"):
        st.get(old)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 7 and all(line.startswith("warning: skipping damaged row") for line in err), err
    assert "Traceback" not in "\n".join(err)


def test_answers_file_keeps_the_rules_its_answers_made(tmp_path):
    """An "n" to a weak edge makes a rule: the file names it, so a replay
    where the rule exists replays the answer in its place; a file written
    before the list existed still reads; a malformed list is refused."""
    from argus.cli.session import read_answers_doc
    p = tmp_path / "a.json"
    made = [{"kind": "not_causal", "key": {"src_thread": "w", "edge_type": "wakeup"}, "value": None}]
    write_answers_file(str(p), [{"kind": "weak", "answer": "n"}, {"kind": "go_on", "answer": "y"}], rules_made=made)
    assert read_answers_doc(str(p)) == ([{"kind": "weak", "answer": "n"}, {"kind": "go_on", "answer": "y"}],
                                        [{"kind": "not_causal", "key": {"src_thread": "w", "edge_type": "wakeup"}}])
    p.write_text(json.dumps({"schema": "argus.answers/1", "answers": [{"kind": "weak", "answer": "f"}]}))
    assert read_answers_doc(str(p)) == ([{"kind": "weak", "answer": "f"}], [])
    p.write_text(json.dumps({"schema": "argus.answers/1", "answers": [], "rules_made": [{"kind": "x", "key": 3}]}))
    with pytest.raises(SessionError):
        read_answers_doc(str(p))


def test_rules_made_by_answers_are_told_from_marks_and_restart_with_the_answers(tmp_path):
    st = Store(str(tmp_path / "s.db"))
    sid = st.create(str(tmp_path / "t.argus"), hang(), 2_000_000_000)
    st.annotate(sid, "not_causal", 17, {"edge_type": "wakeup"})                    # a REPL mark: not an answer's
    st.annotate(sid, "not_causal", Store.ANSWER_TARGET, {"edge_type": "futex"})
    assert st.rules_made(sid) == [{"kind": "not_causal", "key": {"edge_type": "futex"}}]
    st.clear_answers(sid)                                                           # a new diagnosis of the hang
    assert st.rules_made(sid) == [] and len(st.annotations(sid)) == 1
