"""`argus compare` takes --buffer as debug does (an appended list) but
diagnoses one buffer: one file is opened as a path, several are refused in
one line (real parser, real files)."""
import pytest

from argus.cli.common import ArgusError
from argus.cli.main import build_parser, main


def test_one_buffer_is_a_path(tmp_path, capsys):
    missing = tmp_path / "none.argus"
    rc = main(["compare", "--buffer", str(missing), "--pid", "1"])
    err = capsys.readouterr().err
    assert rc != 0 and str(missing) in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_several_buffers_are_refused():
    args = build_parser().parse_args(["compare", "--buffer", "a.argus", "--buffer", "b.argus"])
    with pytest.raises(ArgusError, match="one --buffer"):
        args.func(args)
