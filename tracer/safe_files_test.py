import os

import pytest

from argus.tracer import safe_files
from argus.tracer.safe_files import UnsafePath


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


def test_new_file_streams_sets_the_mode_and_leaves_nothing_on_failure(tmp_path):
    (tmp_path / "out").write_text("old")
    fd = safe_files.open_dir(tmp_path)
    umask = os.umask(0o022)
    try:
        with pytest.raises(RuntimeError):
            with safe_files.new_file(fd, "out", 0o644) as f:
                f.write(b"half")
                raise RuntimeError("the writer failed")
        assert sorted(os.listdir(tmp_path)) == ["out"] and (tmp_path / "out").read_text() == "old"
        os.umask(0o077)
        with safe_files.new_file(fd, "out", 0o644) as f:
            for part in (b"a", b"b"):
                f.write(part)
        assert (tmp_path / "out").read_bytes() == b"ab"
        assert (tmp_path / "out").stat().st_mode & 0o777 == 0o644     # the final mode, whatever the umask
    finally:
        os.umask(umask)
        os.close(fd)
    assert os.listdir(tmp_path) == ["out"]


def test_write_output_errors_are_one_line(tmp_path):
    with pytest.raises(safe_files.ArgusError, match="its directory does not exist"):
        safe_files.write_output(str(tmp_path / "missing" / "x"), "x")
    (tmp_path / "d").mkdir()
    with pytest.raises(safe_files.ArgusError, match="it is a directory"):
        safe_files.write_output(str(tmp_path / "d"), "x")
    with pytest.raises(safe_files.ArgusError, match="it names a directory"):
        safe_files.write_output(str(tmp_path / "d") + "/", "x")
    os.chmod(tmp_path / "d", 0o777)
    with pytest.raises(UnsafePath, match="writable by other users"):
        safe_files.write_output(str(tmp_path / "d" / "x"), "x")
    os.chmod(tmp_path / "d", 0o1777)            # sticky, like /tmp: allowed for a path the user named
    safe_files.write_output(str(tmp_path / "d" / "x"), "x")
    assert sorted(os.listdir(tmp_path / "d")) == ["x"]
    assert sorted(os.listdir(tmp_path)) == ["d"]
