"""JSON from files and rows others may have written, read within bounds.

An input file (`--answers FILE`) may be a FIFO (a read that never ends),
/dev/zero (one that never stops) or a small file nested 200k deep (json's
decoder recursing until RecursionError); a database row may hold anything.
Here a file is opened with O_NONBLOCK (opening a FIFO without a writer must
not hang either), refused unless fstat says it is a regular file, and read
up to a byte limit; the decoded value may nest at most MAX_DEPTH deep (the
decoder's own RecursionError included), so code walking it never recurses
far.  Every failure is InputError, whose text is the reason, for the
caller's one line.
"""
import json
import os
import stat

MAX_DEPTH = 64


class InputError(ValueError):
    pass


def read_regular_file(path, limit):
    """The bytes of path, a regular file of at most limit bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as e:
        raise InputError(e.strerror or str(e))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError("not a regular file")
        if st.st_size > limit:
            raise InputError(f"larger than {limit:,} bytes")
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= limit:                    # the file may grow after the fstat
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise InputError(f"larger than {limit:,} bytes")
        return b"".join(chunks)
    except OSError as e:
        raise InputError(e.strerror or str(e))
    finally:
        os.close(fd)


def _check_depth(value, max_depth):
    """Iterative: a walk that cannot itself overflow the stack."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth > max_depth:
                raise InputError(f"nested deeper than {max_depth} levels")
            stack.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))


def loads(data, limit, max_depth=MAX_DEPTH):
    """json.loads of str or bytes of at most limit characters / bytes, at
    most max_depth deep."""
    if data is None:
        raise InputError("empty")
    if len(data) > limit:
        raise InputError(f"larger than {limit:,} bytes")
    try:
        value = json.loads(data)
    except RecursionError:
        raise InputError(f"nested deeper than {max_depth} levels")
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text")
    except (ValueError, TypeError) as e:
        raise InputError(f"not JSON ({str(e).split(':')[0]})")
    _check_depth(value, max_depth)
    return value


def load_file(path, limit, max_depth=MAX_DEPTH):
    return loads(read_regular_file(path, limit), limit, max_depth)
