"""Several --buffer files (multibuffer.py): the argument handling."""
import argparse

import pytest

from argus.cli import multibuffer
from argus.cli.common import ArgusError


def _args(buffer, window=None, pid=None, tid=None):
    return argparse.Namespace(buffer=buffer, buffers=None, window=window, pid=pid, tid=tid)


def test_window_with_several_buffers_is_said_to_be_ignored(capsys):
    args = _args(["a.argus", "b.argus"], window=5.0)
    assert multibuffer.buffers(args) == ["a.argus", "b.argus"] and args.buffer is None
    assert capsys.readouterr().err == multibuffer.WINDOW_IGNORED + "\n"


@pytest.mark.parametrize("buffer, window", [(["a.argus", "b.argus"], None), (["a.argus", "b.argus"], 0),
                                            (["a.argus"], 5.0)])
def test_no_note_without_a_window_or_with_one_buffer(capsys, buffer, window):
    args = _args(buffer, window=window)
    several = multibuffer.buffers(args)
    assert (several is None) == (len(buffer) == 1)
    assert capsys.readouterr().err == ""


def test_host_pid_needs_several_buffers():
    with pytest.raises(ArgusError, match="HOST:ID"):
        multibuffer.buffers(_args(["a.argus"], pid="web:100"))
