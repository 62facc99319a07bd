"""`argus rules list|rm` on a real session store (ARGUS_SESSION_DB in a temp dir)."""
import json

from argus.cli.main import main
from argus.cli.session import Store


def test_list_and_rm(tmp_path, monkeypatch, capsys):
    db = tmp_path / "sessions.db"
    monkeypatch.setenv("ARGUS_SESSION_DB", str(db))
    assert main(["rules", "list"]) == 0 and "no rules" in capsys.readouterr().out
    st = Store(str(db))
    rid = st.add_rule({"kind": "data_flag", "key": {"process": "ui", "thread": "ui"},
                       "value": {"image": "ui", "symbol": "done"}, "scope": {"build_id": "0123456789abcdef"}})
    st.close()
    assert main(["rules", "list"]) == 0
    out = capsys.readouterr().out
    assert f"{rid:>4}  data_flag" in out and "ui:done" in out and "build id 0123456789ab" in out
    assert main(["rules", "list", "--json"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)["rules"]] == [rid]
    assert main(["rules", "rm", str(rid + 1)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"no rule {rid + 1}" in err
    assert main(["rules", "rm", str(rid)]) == 0
    assert Store(str(db)).rules() == []
