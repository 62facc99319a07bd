"""Will a decode + graph build fit in memory?  Checked before `hangs` and
`debug` load a window, so a full 2 GiB buffer (~50M events, ~12 GB to build)
is refused with one line instead of driving the machine into the OOM killer.

The estimate: the records of the chunks the load reads (chunk table:
stream.records_in, exact for the data, plus the few state records of a
windowed load) times PEAK_BYTES_PER_EVENT, against /proc/meminfo's
MemAvailable.
"""
from argus.cli.common import ArgusError
from argus.tracer import reader, stream

# bench/graph_build.py on a 50M-event buffer: decode peaks at 169 B/event
# (rows, radix keys, gather copy), the build at 135 B/event with the 80 B
# rows alive; the diagnosis adds its own.  Rounded up.
PEAK_BYTES_PER_EVENT = 250


def mem_available():
    """MemAvailable in bytes, or None when the kernel does not say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_load(path, since_ns, until_ns, widening, avail=None):
    """Raises ArgusError (one line) when loading [since_ns, until_ns] (None:
    the whole buffer) would need more than the available memory (avail:
    bytes, default MemAvailable); widening: a smaller window was loaded
    already and did not settle the answer."""
    avail = mem_available() if avail is None else avail
    if avail is None:
        return
    try:
        events = stream.records_in(stream.chunk_table(path), since_ns or 0,
                                   (1 << 64) - 1 if until_ns is None else until_ns)
    except (OSError, ValueError, reader.TraceError):
        return                      # the load itself reports an unreadable buffer
    need = events * PEAK_BYTES_PER_EVENT
    if need <= avail:
        return
    what = "the whole buffer" if since_ns is None else "the window"
    why = "the answer may lie before the last window loaded, but " if widening else ""
    raise ArgusError(f"{why}{what} holds {events:,} events: decoding and building them needs ~{need / 2**30:.1f} "
                     f"GiB, only {avail / 2**30:.1f} GiB is available: pass a smaller --window SECONDS "
                     f"(or --at), or free memory")
