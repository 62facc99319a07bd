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
    assert common.resolve_buffer("/x/y.argus") == "/x/y.argus"
    assert common.resolve_buffer(None) == common.DEFAULT_BUFFER
    (tmp_path / "state.json").write_text('{"buffer": "/live.argus"}')
    assert common.resolve_buffer(None) == "/live.argus"
