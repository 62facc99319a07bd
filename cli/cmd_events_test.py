"""`argus events` streams window by window; its output must be the one of a
whole-buffer decode (the command before streaming), on the golden trace,
text and JSON, filtered and not."""
import argparse
import contextlib
import io
import json
import pathlib

import pytest

from argus.cli import cmd_events
from argus.cli.tracefile import ThreadNames
from argus.tracer import reader, schema
from support import net_records
from support.crafted import Trace, ms
from support.libc import LIBC, libc_symbol_offset

GOLDEN = str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "data" / "golden.argus")


def whole_decode_output(args):
    """What `argus events` printed when it decoded the whole buffer at once."""
    trace = reader.decode_file(GOLDEN, strict=False)
    rows = cmd_events.select_rows(trace.rows, args.pid, args.tid, args.type)
    if args.limit > 0:
        rows = rows[:args.limit]
    out = io.StringIO()
    cmd_events._write_rows(out, rows, ThreadNames(trace.rows), trace, int(trace.first_ts), args.json,
                           cmd_events.FnNames(trace))
    return out.getvalue()


@pytest.mark.parametrize("extra", [[], ["--json"], ["--type", "switch_out", "--type", "mapping"],
                                   ["--pid", "11657", "--json"], ["--limit", "5000"]])
def test_streamed_output_is_the_whole_decode(extra):
    p = argparse.ArgumentParser()
    sub = p.add_subparsers()
    cmd_events.register(sub)
    args = p.parse_args(["events", "--buffer", GOLDEN, *extra])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cmd_events.run(args, chunks_per_window=2) == 0
    want = whole_decode_output(args)
    assert want and out.getvalue() == want



@pytest.mark.skipif(not pathlib.Path(LIBC).exists(), reason="needs the x86_64 glibc")
def test_a_probe_records_fn_is_symbolized_and_its_cpu_shown_as_none():
    """A callback_begin from a user-space ring (cpu 0xffff) whose fn is
    libc's getpid, mapped at base: text shows `[  -]` and `<getpid>`, JSON
    keeps the cpu and adds fn_symbol."""
    base, path = 0x7F0000000000, LIBC.encode()
    t = Trace()
    t.thread(10, 10, "app").run(10, 0)
    t.row(ms(0.5), 10, schema.MAPPING, obj=base, obj2=base + 0x200000, val=0, aux=5, peer_tid=0,
          peer_pid=len(path))
    t.row(ms(1), 10, schema.CALLBACK_BEGIN, obj=0x55, obj2=base + libc_symbol_offset("getpid"), cpu=0xFFFF)
    trace = reader.Trace(path="x", rows=t.rows(), nrows=0, bytes=0, torn_chunks=0, bad_records=0,
                         unknown_records=0, records_overwritten=0, records_lost=0, first_ts=0, last_ts=ms(2),
                         created_realtime_ns=0, created_ns=0, strings=path)
    rows = trace.rows[trace.rows["type"] == schema.CALLBACK_BEGIN]
    fns = cmd_events.FnNames(trace)
    text, js = io.StringIO(), io.StringIO()
    cmd_events._write_rows(text, rows, ThreadNames(trace.rows), trace, 0, False, fns)
    cmd_events._write_rows(js, rows, ThreadNames(trace.rows), trace, 0, True, fns)
    line = text.getvalue()
    assert "[  -]" in line and f"fn={base + libc_symbol_offset('getpid'):#x} <" in line and "getpid>" in line
    j = json.loads(js.getvalue())
    assert j["cpu"] == 0xFFFF and "getpid" in j["fn_symbol"]


def test_a_go_scheduler_record_names_its_goroutine():
    """go_ready / go_execute / go_park: text and JSON name the goroutine (its g)."""
    t = Trace()
    t.thread(10, 10, "gosrv").run(10, 0)
    t.row(ms(1), 10, schema.GO_READY, obj=0xC000123456, obj2=0xC000000380)
    trace = reader.Trace(path="x", rows=t.rows(), nrows=0, bytes=0, torn_chunks=0, bad_records=0,
                         unknown_records=0, records_overwritten=0, records_lost=0, first_ts=0, last_ts=ms(2),
                         created_realtime_ns=0, created_ns=0, strings=b"")
    rows = trace.rows[trace.rows["type"] == schema.GO_READY]
    text, js = io.StringIO(), io.StringIO()
    cmd_events._write_rows(text, rows, ThreadNames(trace.rows), trace, 0, False, None)
    cmd_events._write_rows(js, rows, ThreadNames(trace.rows), trace, 0, True, None)
    assert "go_ready" in text.getvalue() and "goroutine g=0xc000123456" in text.getvalue()
    j = json.loads(js.getvalue())
    assert j["type"] == "go_ready" and j["obj"] == 0xC000123456


def test_a_net_io_record_shows_its_4_tuple(tmp_path):
    """net_io: text and JSON show both ends' addresses from the frames side array."""
    path = str(tmp_path / "n.argus")
    net_records.write_buffer(path, [net_records.record(ms(1), 100, schema.NET_SEND, 6, ("10.0.0.1", 40000),
                                                       ("2001:db8::2", 443), 7, 100)])
    trace = reader.decode_file(path)
    rows = trace.rows[trace.rows["type"] == schema.NET_IO]
    text, js = io.StringIO(), io.StringIO()
    cmd_events._write_rows(text, rows, ThreadNames(trace.rows), trace, 0, False, None)
    cmd_events._write_rows(js, rows, ThreadNames(trace.rows), trace, 0, True, None)
    assert "send tcp fd=5 10.0.0.1:40000 -> [2001:db8::2]:443 bytes=100 seq=7" in text.getvalue()
    j = json.loads(js.getvalue())
    assert (j["local_addr"], j["local_port"], j["remote_addr"], j["remote_port"]) == \
        ("10.0.0.1", 40000, "2001:db8::2", 443) and j["seq"] == 7 and j["dir"] == "send"


def test_short_net_io_records_show_their_sockets_tuple_or_an_unknown_one(tmp_path):
    """A net_io_short record is a net_io row with the tuple of its socket's
    full record; one whose socket has no full record says the tuple is unknown."""
    path = str(tmp_path / "n.argus")
    net_records.write_buffer(path, [
        net_records.record(ms(1), 100, schema.NET_SEND, 6, ("10.0.0.1", 40000), ("10.0.0.2", 80), 7, 100),
        net_records.short_record(ms(2), 100, schema.NET_SEND, 6, 107, 50),
        net_records.short_record(ms(3), 100, schema.NET_RECV, 6, 9, 60, inode=78)])
    trace = reader.decode_file(path)
    rows = trace.rows[trace.rows["type"] == schema.NET_IO]
    text, js = io.StringIO(), io.StringIO()
    cmd_events._write_rows(text, rows, ThreadNames(trace.rows), trace, 0, False, None)
    cmd_events._write_rows(js, rows, ThreadNames(trace.rows), trace, 0, True, None)
    lines = text.getvalue().splitlines()
    assert "send tcp fd=5 10.0.0.1:40000 -> 10.0.0.2:80 bytes=50 seq=107" in lines[1]
    assert "recv tcp fd=5 ? -> ? (no full record of the socket in the window) bytes=60 seq=9" in lines[2]
    j = [json.loads(line) for line in js.getvalue().splitlines()]
    assert [(x["type"], x["local_addr"], x["remote_addr"], x["bytes"]) for x in j] == [
        ("net_io", "10.0.0.1", "10.0.0.2", 100), ("net_io", "10.0.0.1", "10.0.0.2", 50), ("net_io", None, None, 60)]


def test_a_proc_ns_record_shows_where_the_process_lives():
    """proc_ns: text and JSON give the cgroup path, its id, the netns and the container."""
    path = ("/system.slice/docker-" + "ab" * 32 + ".scope").encode()
    t = Trace()
    t.thread(10, 10, "srv").run(10, 0)
    t.proc_ns(10, ms(1), 77, path.decode(), 4026532000)
    trace = reader.Trace(path="x", rows=t.rows(), nrows=0, bytes=0, torn_chunks=0, bad_records=0,
                         unknown_records=0, records_overwritten=0, records_lost=0, first_ts=0, last_ts=ms(2),
                         created_realtime_ns=0, created_ns=0, strings=path + b"\0")
    rows = trace.rows[trace.rows["type"] == schema.PROC_NS]
    text, js = io.StringIO(), io.StringIO()
    cmd_events._write_rows(text, rows, ThreadNames(trace.rows), trace, 0, False, None)
    cmd_events._write_rows(js, rows, ThreadNames(trace.rows), trace, 0, True, None)
    assert f"cgroup={path.decode()} cgroup_id=77 netns=4026532000 container=docker:abababababab" in text.getvalue()
    j = json.loads(js.getvalue())
    assert (j["cgroup"], j["cgroup_id"], j["netns_ino"], j["container"]) == \
        (path.decode(), 77, 4026532000, "docker:abababababab")
