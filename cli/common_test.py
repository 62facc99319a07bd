import pytest

from argus.cli import common
from argus.cli.common import ArgusError, parse_size


@pytest.mark.parametrize("text,expected", [
    ("2G", 2 << 30), ("512M", 512 << 20), ("64MiB", 64 << 20), ("1.5g", 3 << 29), (str(8 << 20), 8 << 20),
])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "12Q", "-5M", "1M"])
def test_parse_size_rejects(text):
    with pytest.raises(ArgusError):
        parse_size(text)


def test_refuses_without_root(monkeypatch):
    monkeypatch.setattr(common.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(common, "_has_bpf_caps", lambda: False)
    with pytest.raises(ArgusError, match="needs root"):
        common.require_tracing_privileges()


def test_resolve_buffer_prefers_explicit(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "STATE_FILE", str(tmp_path / "state.json"))
    # A real `argus start` on this machine (CI runs the demo first) leaves
    # a last-buffer record in the global state dir; point it away.
    monkeypatch.setattr(common, "LAST_BUFFER_FILE", str(tmp_path / "last-buffer.json"))
    assert common.resolve_buffer("/x/y.argus") == "/x/y.argus"
    assert common.resolve_buffer(None) == common.DEFAULT_BUFFER
    (tmp_path / "state.json").write_text('{"buffer": "/live.argus"}')
    assert common.resolve_buffer(None) == "/live.argus"


def test_last_buffer_remembered_0600_and_never_through_a_symlink(tmp_path, monkeypatch, capsys):
    state = tmp_path / "state"
    monkeypatch.setattr(common, "STATE_DIR", str(state))
    monkeypatch.setattr(common, "LAST_BUFFER_FILE", str(state / "last-buffer.json"))
    monkeypatch.setattr(common, "STATE_FILE", str(tmp_path / "none.json"))
    assert common.last_buffer() is None
    common.remember_buffer(str(tmp_path / "a.argus"))
    assert common.last_buffer() == str(tmp_path / "a.argus")
    assert (state / "last-buffer.json").stat().st_mode & 0o777 == 0o600
    assert common.resolve_buffer(None) == str(tmp_path / "a.argus")
    assert "the last buffer traced into" in capsys.readouterr().err
    # a symlink in its place: not followed for writing nor for reading
    (state / "last-buffer.json").unlink()
    target = tmp_path / "target.json"
    target.write_text('{"buffer": "/elsewhere"}')
    (state / "last-buffer.json").symlink_to(target)
    common.remember_buffer(str(tmp_path / "b.argus"))
    assert target.read_text() == '{"buffer": "/elsewhere"}'      # written as a new file renamed over the link
    assert not (state / "last-buffer.json").is_symlink()
    assert common.last_buffer() == str(tmp_path / "b.argus")
    (state / "last-buffer.json").unlink()
    (state / "last-buffer.json").symlink_to(target)
    assert common.last_buffer() is None                           # never read through a link
    assert common.resolve_buffer(None, announce=False) == common.DEFAULT_BUFFER
