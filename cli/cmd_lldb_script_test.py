"""lldb-script's choice of a root cause from a saved report, one host or several."""
import json
import os
import types

import pytest

from argus.cli import cmd_lldb_script as L
from argus.cli.common import ArgusError


def _args(path, **kw):
    a = dict(pid=None, tid=None, function=None, diagnosis=str(path), root=None, next_call=False, image=[],
             max_steps=100, timeout=5.0)
    a.update(kw)
    return types.SimpleNamespace(**a)


def _report(tmp_path, hosts=None, host=None):
    pid = os.getpid()
    rc = {"pid": pid, "tid": pid, "comm": "server", "primary": True, "vertex": 3}
    d = {"root_causes": [rc]}
    if hosts is not None:
        rc["host"] = host
        d["hosts"] = hosts
    p = tmp_path / "d.json"
    p.write_text(json.dumps(d))
    return p


def test_a_one_host_report_gives_its_root_cause(tmp_path):
    params = L.build_params(_args(_report(tmp_path)))
    assert params["pid"] == os.getpid() and params["tid"] == os.getpid() and params["vertex"] == 3


def test_a_root_cause_on_this_host_of_a_merged_report_is_taken(tmp_path):
    hosts = [{"name": "web", "hostname": "elsewhere", "boot_id": "0" * 36},
             {"name": "here", "hostname": os.uname().nodename, "boot_id": L._this_boot_id()}]
    params = L.build_params(_args(_report(tmp_path, hosts, "here")))
    assert params["pid"] == os.getpid()


def test_a_root_cause_on_another_host_is_refused_in_one_line(tmp_path):
    hosts = [{"name": "here", "hostname": os.uname().nodename, "boot_id": L._this_boot_id()},
             {"name": "api", "hostname": "api.example", "boot_id": "1" * 36}]
    with pytest.raises(ArgusError) as e:
        L.build_params(_args(_report(tmp_path, hosts, "api")))
    assert "ran on host api (api.example), not here" in str(e.value) and "\n" not in str(e.value)
