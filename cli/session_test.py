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
