import os

import pytest

from argus.cli import safe_files
from argus.cli.safe_files import UnsafePath


def test_open_dir_creates_private(tmp_path):
    fd = safe_files.open_dir(tmp_path / "a" / "b", create=True)
    os.close(fd)
    assert (tmp_path / "a" / "b").stat().st_mode & 0o777 == 0o700


def test_open_dir_refuses_links_files_and_writable(tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "link")
    with pytest.raises(UnsafePath, match="is a symbolic link"):
        safe_files.open_dir(tmp_path / "link")
    (tmp_path / "file").write_text("x")
    with pytest.raises(UnsafePath, match="is not a directory"):
        safe_files.open_dir(tmp_path / "file")
    os.chmod(tmp_path / "real", 0o777)
    with pytest.raises(UnsafePath, match=r"writable by other users \(mode 0777\)"):
        safe_files.open_dir(tmp_path / "real")
    os.chmod(tmp_path / "real", 0o1777)     # sticky: only where the caller allows it
    os.close(safe_files.open_dir(tmp_path / "real", allow_sticky=True))
    with pytest.raises(FileNotFoundError):
        safe_files.open_dir(tmp_path / "missing")


def test_write_file_replaces_a_link_without_following_it(tmp_path):
    target = tmp_path / "target"
    target.write_text("keep")
    os.symlink(target, tmp_path / "out")
    fd = safe_files.open_dir(tmp_path)
    try:
        safe_files.write_file(fd, "out", "new")
        assert safe_files.read_text(fd, "out") == "new"
    finally:
        os.close(fd)
    assert target.read_text() == "keep" and not os.path.islink(tmp_path / "out")
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o600
    assert sorted(os.listdir(tmp_path)) == ["out", "target"]


def test_open_file_refuses_links_and_fifos(tmp_path):
    (tmp_path / "t").write_text("x")
    os.symlink(tmp_path / "t", tmp_path / "l")
    os.mkfifo(tmp_path / "p")
    fd = safe_files.open_dir(tmp_path)
    try:
        with pytest.raises(UnsafePath, match="is a symbolic link"):
            safe_files.open_file(fd, "l")
        with pytest.raises(UnsafePath, match="is not a regular file"):   # and does not block
            safe_files.open_file(fd, "p")
    finally:
        os.close(fd)


def test_path_is_private(tmp_path):
    assert safe_files.path_is_private(tmp_path)
    os.chmod(tmp_path, 0o777)
    assert not safe_files.path_is_private(tmp_path / "x")
