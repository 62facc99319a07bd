"""A full disk while tracing: the producer gets ENOSPC (not SIGBUS through the
mapping), and every record committed before is still readable."""
import errno
import os
import subprocess

import pytest

from argus.tracer import reader
from argus.tracer.producer import Producer, ProducerError, create_buffer


@pytest.fixture
def small_fs(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "fs"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(mnt)], check=True)
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_full_disk_is_an_error_not_a_crash(small_fs):
    path = str(small_fs / "trace.argus")
    create_buffer(path, 64 << 20, chunk_size=1 << 20)   # sparse: 64 MiB on a 6 MiB disk
    written = 0
    with pytest.raises(ProducerError) as info:
        with Producer(path, producer_id=1) as p:
            for i in range(10_000_000):
                p.write_data_flag("write", 1, 1, addr=0x1000, value=i, pc=0x400000, ts_ns=i + 1)
                written += 1
    assert info.value.errno == errno.ENOSPC
    assert "cannot allocate disk" in str(info.value)
    trace = reader.decode_file(path)
    assert trace.nrows == written > 0
    assert list(trace.rows["val"][:3]) == [0, 1, 2] and int(trace.rows["val"][-1]) == written - 1
