import json
import os
import re

import pytest

from argus.cli import hookspec
from argus.cli.common import ArgusError

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_types_mirror_probe_record_h():
    text = open(os.path.join(REPO, "dylib-instrument", "probe_record.h")).read()
    enum = re.search(r"enum argus_probe_type \{(.*?)\};", text, re.S).group(1)
    values = {m.group(1).lower(): int(m.group(2)) for m in re.finditer(r"ARGUS_EV_(\w+) = (\d+)", enum)}
    assert values == hookspec.PROBE_TYPES


def test_shipped_specs_load_and_flatten():
    spec_dir = os.path.join(REPO, "dylib-instrument", "hooks")
    paths = sorted(os.path.join(spec_dir, n) for n in os.listdir(spec_dir))
    hooks = hookspec.load(paths)
    assert ("pthread_mutex_lock", 53, 56) in hooks
    flat = hookspec.flatten(hooks).splitlines()
    assert len(flat) == len(hooks)
    assert all(len(line.split("\t")) == 4 for line in flat)


@pytest.mark.parametrize("spec,message", [
    ({"hooks": [{"symbol": "f", "enter": "nope"}]}, "unknown record type 'nope'"),
    ({"hooks": [{"symbol": "f; rm -rf", "enter": "enqueue"}]}, "needs a \"symbol\""),
    ({"hooks": [{"symbol": "f"}]}, "records nothing"),
    ({"nohooks": 1}, "needs a list"),
])
def test_bad_specs_are_one_clear_error(tmp_path, spec, message):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(spec))
    with pytest.raises(ArgusError, match=re.escape(message)):
        hookspec.load([str(p)])


def test_not_json(tmp_path):
    p = tmp_path / "s.json"
    p.write_text("{")
    with pytest.raises(ArgusError, match="not valid JSON"):
        hookspec.load([str(p)])
