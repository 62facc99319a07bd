"""bounded_json: files and rows are read within size and depth, or refused."""
import os

import pytest

from argus.cli import bounded_json as B


def test_regular_file_within_the_limit_is_read(tmp_path):
    p = tmp_path / "a.json"
    p.write_text('{"a": [1, {"b": null}]}')
    assert B.load_file(str(p), 100) == {"a": [1, {"b": None}]}


def test_fifo_dev_zero_and_directories_are_refused_at_once(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)                          # no writer: a blocking open would hang
    for path in (str(fifo), "/dev/zero", str(tmp_path)):
        with pytest.raises(B.InputError, match="not a regular file"):
            B.read_regular_file(path, 1 << 20)


def test_large_files_and_texts_are_refused(tmp_path):
    p = tmp_path / "big"
    p.write_bytes(b" " * 2000)
    with pytest.raises(B.InputError, match="larger than 1,000 bytes"):
        B.read_regular_file(str(p), 1000)
    with pytest.raises(B.InputError, match="larger than"):
        B.loads("[" * 10 + "]" * 10, 5)


def test_deep_nesting_is_refused_without_recursion(tmp_path):
    with pytest.raises(B.InputError, match="nested deeper than 64"):
        B.loads("[" * 200_000 + "]" * 200_000, 1 << 20)       # json's own RecursionError
    with pytest.raises(B.InputError, match="nested deeper than 64"):
        B.loads("[" * 65 + "]" * 65, 1 << 20)                 # below it, still refused
    assert B.loads("[" * 64 + "]" * 64, 1 << 20) is not None


def test_garbage_is_one_reason():
    for data, why in ((b"\xff\xfe", "not"), ("{", "not JSON"), (None, "empty"), ("", "not JSON")):
        with pytest.raises(B.InputError, match=why):
            B.loads(data, 100)
