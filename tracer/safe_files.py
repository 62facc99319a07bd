"""Files Argus keeps next to paths other users may control (issue 16).

Argus runs as root and writes beside user-chosen paths (`/tmp` buffers, the
`<buffer>.lldb/` results, ARGUS_RUN_DIR / ARGUS_STATE_DIR).  A path is a name
another user can re-point between a check and an open, so nothing here checks
a path and then uses it again; it checks what an open descriptor refers to:

  directory   opened with O_DIRECTORY | O_NOFOLLOW, then fstat: a real
              directory, owned by root or by the caller, not writable by
              group or others (a sticky world-writable one such as /tmp only
              where allow_sticky says so: others cannot rename or remove our
              entries there).  Every file is then reached through that fd
              (os.open(dir_fd=...)), so renaming the directory away changes
              nothing.
  reading     O_NOFOLLOW | O_NONBLOCK (a FIFO never blocks the open), then
              fstat: a regular file owned by root or by the caller.
  writing     one writer for every file Argus creates (new_file, and
              write_file / write_output / output_file on top of it): a new
              file under a random temporary name with O_CREAT | O_EXCL |
              O_NOFOLLOW, mode 0600, relative to the directory fd; written
              through its descriptor, fchmod'ed to the final mode, then
              renamed over the target in the same directory (renameat): a
              planted symlink is replaced, never followed, and a file someone
              opened beforehand is never the one written.  The temporary file
              is removed on every failure.  Nothing is written by path after a
              check: a library that only writes to a path (LIEF, SQLite) builds
              in memory and the bytes go through here.

Every refusal is an UnsafePath: an ArgusError, so one line and a non-zero exit.
"""
import contextlib
import errno
import os
import secrets
import stat

from argus.tracer.errors import ArgusError


class UnsafePath(ArgusError):
    """A file or directory another user could control: refused."""


def trusted_uid(uid):
    return uid == 0 or uid == os.geteuid()


def _owner_problem(st):
    return None if trusted_uid(st.st_uid) else f"is owned by uid {st.st_uid} (not root or you)"


def dir_problem(st, allow_sticky=False):
    """Why a directory's fstat/lstat makes it unsafe to keep files in, or None."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory"
    owner = _owner_problem(st)
    if owner:
        return owner
    if st.st_mode & 0o022 and not (allow_sticky and st.st_mode & stat.S_ISVTX):
        return f"is writable by other users (mode {stat.S_IMODE(st.st_mode):04o})"
    return None


def _refuse(path, why, what="directory"):
    raise UnsafePath(f"refusing {what} {path}: it {why}")


def open_dir(path, create=False, mode=0o700, allow_sticky=False):
    """A verified directory fd for path (see the top of this file).  create:
    mkdir it (mode 0700, parents as needed) when missing.  Raises
    FileNotFoundError when missing and not create, UnsafePath when refused."""
    path = os.path.abspath(path)
    if create:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            os.mkdir(path, mode)
        except FileExistsError:
            pass
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            try:
                why = dir_problem(os.lstat(path))
            except OSError:
                why = None
            _refuse(path, why or "is not a directory")
        raise
    why = dir_problem(os.fstat(fd), allow_sticky)
    if why:
        os.close(fd)
        _refuse(path, why)
    return fd


def open_parent(path, create=False, allow_sticky=False):
    """(verified fd of path's directory, file name)."""
    path = os.path.abspath(path)
    return open_dir(os.path.dirname(path), create=create, allow_sticky=allow_sticky), os.path.basename(path)


def open_file(dir_fd, name, flags=os.O_RDONLY, mode=0o600, shown=None):
    """os.open(name, dir_fd=dir_fd) with O_NOFOLLOW, refusing anything but a
    regular file owned by root or the caller (shown: the path for messages)."""
    shown = shown or name
    try:
        fd = os.open(name, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            _refuse(shown, "is a symbolic link", "file")
        raise
    st = os.fstat(fd)
    why = "is not a regular file" if not stat.S_ISREG(st.st_mode) else _owner_problem(st)
    if why:
        os.close(fd)
        _refuse(shown, why, "file")
    os.set_blocking(fd, True)
    return fd


def read_text(dir_fd, name, shown=None):
    fd = open_file(dir_fd, name, shown=shown)
    with os.fdopen(fd, errors="replace") as f:
        return f.read()


@contextlib.contextmanager
def new_file(dir_fd, name, mode=0o600):
    """A binary file object on a new private file in dir_fd; when the block
    ends without an exception it becomes dir_fd/name with mode (top of this
    file).  Any exception, in the block or here, removes the temporary file."""
    tmp = f".{name[:200]}.{secrets.token_hex(8)}.tmp"      # within NAME_MAX
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fchmod(f.fileno(), mode)        # through the fd: whatever the umask, never a path
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise


def write_file(dir_fd, name, data, mode=0o600):
    """Writes data (str or bytes) as dir_fd/name through new_file."""
    with new_file(dir_fd, name, mode) as f:
        f.write(data.encode() if isinstance(data, str) else data)


@contextlib.contextmanager
def output_file(path, mode=0o600):
    """new_file for a path the user named (an export, a report, an answers
    file, an instrumented library): its directory must pass open_dir, where a
    sticky world-writable one such as /tmp is allowed (others cannot rename
    or remove our temporary file there).  Every failure is one line: an
    ArgusError (UnsafePath when refused)."""
    try:
        dir_fd, name = open_parent(path, allow_sticky=True)
    except FileNotFoundError:
        raise ArgusError(f"cannot write {path}: its directory does not exist") from None
    except OSError as e:
        raise ArgusError(f"cannot write {path}: {e.strerror}") from None
    try:
        if not name or path.endswith(os.sep):
            raise ArgusError(f"cannot write {path}: it names a directory")
        with new_file(dir_fd, name, mode) as f:
            yield f
    except IsADirectoryError:
        raise ArgusError(f"cannot write {path}: it is a directory") from None
    except OSError as e:
        raise ArgusError(f"cannot write {path}: {e.strerror}") from None
    finally:
        os.close(dir_fd)


def write_output(path, data, mode=0o600):
    """data (str or bytes) as a new file at the path the user named (output_file)."""
    with output_file(path, mode) as f:
        f.write(data.encode() if isinstance(data, str) else data)


def path_is_private(path, allow_sticky_leaf=True):
    """True when no other user can re-point path: every directory from / down
    to it (symlinks resolved) is owned by root or the caller and not writable
    by others, or sticky (others cannot rename our entries there).
    allow_sticky_leaf=False: path itself must be writable by nobody else,
    sticky or not (others can add entries to a sticky directory, e.g. a
    module beside a script that will be run from there).  Used to decide
    whether printing a path for root to run later is safe."""
    real = os.path.realpath(path)
    parts = real.split(os.sep)
    for k in range(1, len(parts) + 1):
        d = os.sep + os.path.join(*parts[1:k]) if k > 1 else os.sep
        try:
            st = os.lstat(d)
        except OSError:
            return False
        if dir_problem(st, allow_sticky=allow_sticky_leaf or k < len(parts)):
            return False
    return True
