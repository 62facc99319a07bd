"""Thread names as the trace stores them.

The graph core (graphbuild/core/) builds the thread and process tables; this
module only turns a fixed-size, NUL-padded comm field into text.
"""


def decode_comm(raw):
    """A comm field (bytes up to the first NUL, or already text) as str."""
    if isinstance(raw, bytes):
        return raw.split(b"\0", 1)[0].decode("utf-8", "replace")
    return str(raw)
