"""argus_rb_create / argus_rb_open on files that are not what they seem
(issue 16, items 2 and 6): links, FIFOs, other users' or world-readable
files, and a buffer truncated under its producer (SIGBUS)."""
import ctypes
import os
import subprocess
import sys
import textwrap
import threading

import pytest

from argus.tracer import native, producer, reader
from argus.tracer.producer import ProducerError


def _open(path, writable):
    lib = native.lib()
    handle = ctypes.c_void_p()
    rc = lib.argus_rb_open(native.fs_path(path), writable, ctypes.byref(handle))
    msg = native.rb_error(handle) if rc else ""
    lib.argus_rb_close(handle)
    return rc, msg


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = []
    t = threading.Thread(target=lambda: result.append(_open(fifo, 0)), daemon=True)
    t.start()
    t.join(5)
    assert result, "opening a FIFO blocked"
    assert result[0][0] < 0 and "not a regular file" in result[0][1]
    with pytest.raises(ProducerError, match="not a regular file"):
        producer.create_buffer(fifo, 8 << 20)
    assert os.path.exists(fifo) and not os.path.isfile(fifo)


def test_links_are_refused(tmp_path):
    real = tmp_path / "real.argus"
    producer.create_buffer(real, 8 << 20)
    os.symlink(real, tmp_path / "link.argus")
    for writable in (0, 1):
        rc, msg = _open(tmp_path / "link.argus", writable)
        assert rc < 0 and "is a symbolic link" in msg
    before = real.read_bytes()
    with pytest.raises(ProducerError, match="is a symbolic link"):
        producer.create_buffer(tmp_path / "link.argus", 16 << 20)
    assert real.read_bytes() == before


def test_writers_refuse_a_buffer_others_may_open(tmp_path):
    buf = tmp_path / "b.argus"
    producer.create_buffer(buf, 8 << 20)
    os.chmod(buf, 0o644)
    rc, msg = _open(buf, 1)
    assert rc < 0 and "mode 0644 lets group or others open it" in msg
    assert _open(buf, 0)[0] == 0            # reading it is fine


def test_create_makes_a_new_private_file_and_leaves_no_temporary(tmp_path):
    buf = tmp_path / "b.argus"
    buf.write_bytes(b"old")
    os.chmod(buf, 0o666)
    ino = buf.stat().st_ino
    with open(buf, "rb") as held:             # a descriptor opened before
        producer.create_buffer(buf, 8 << 20)
        assert held.read() == b"old"          # ... still sees the old file, not the trace
    st = buf.stat()
    assert st.st_ino != ino and st.st_mode & 0o777 == 0o600 and st.st_size == 8 << 20
    assert os.listdir(tmp_path) == ["b.argus"]
    assert reader.buffer_stats(buf)["nchunks"] > 0


def test_create_refuses_a_directory_others_can_write(tmp_path):
    d = tmp_path / "open"
    d.mkdir()
    os.chmod(d, 0o777)
    with pytest.raises(ProducerError, match="writable by other users"):
        producer.create_buffer(d / "b.argus", 8 << 20)
    os.chmod(d, 0o1777)                       # sticky, like /tmp: our entry cannot be replaced
    producer.create_buffer(d / "b.argus", 8 << 20)


def test_sigbus_on_a_truncated_buffer_is_survived(tmp_path):
    """The guarded producer keeps running after its file is truncated, and
    reports the fault; unguarded, the same writes kill the process."""
    buf = tmp_path / "b.argus"
    producer.create_buffer(buf, 8 << 20)
    script = textwrap.dedent(f"""
        import ctypes, os, sys
        from argus.tracer import native, producer
        p = producer.Producer({str(buf)!r}, 1)
        lib = native.lib()
        if sys.argv[1] == "guard":
            assert lib.argus_rb_guard_sigbus(p._handle) == 0
        p.write_raw(producer.EVENT_HEADER.pack(1, 2, 3, 1, 24, 0, 0))
        os.truncate({str(buf)!r}, 0)
        for _ in range(100):
            p.write_raw(producer.EVENT_HEADER.pack(1, 2, 3, 1, 24, 0, 0))
        off = ctypes.c_uint64()
        print(lib.argus_rb_faulted(p._handle, ctypes.byref(off)))
    """)
    guarded = subprocess.run([sys.executable, "-c", script, "guard"], capture_output=True, text=True, timeout=60)
    assert guarded.returncode == 0 and guarded.stdout.strip() == "1", guarded.stderr
    producer.create_buffer(buf, 8 << 20)
    bare = subprocess.run([sys.executable, "-c", script, "bare"], capture_output=True, text=True, timeout=60)
    assert bare.returncode == -7                # SIGBUS
