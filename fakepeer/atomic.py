"""Atomic file writes: every file the tool writes appears whole, or the old one stays; and the
one way to read a small text file whole (`read_text`) that a FIFO or a device cannot hang.

Why: a report, a formatted fixture or an exported schema rewritten in place is torn by a full
disk, a kill or a second run writing the same path. Here the new content goes to a temporary
file in the same folder, is flushed and fsync'ed, and replaces the target with `os.replace` (an
atomic rename on POSIX). Every writer of the tool goes through this module.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO


def write_bytes(path: Path, data: bytes) -> None:
    """Replace `path` with `data` atomically (creating its folder); OSError when it cannot."""
    with replacing(path) as stream:
        stream.write(data)


def write_text(path: Path, text: str, *, errors: str = "strict") -> None:
    """Replace `path` with `text` in UTF-8, atomically."""
    write_bytes(path, text.encode("utf-8", errors))


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[IO[bytes]]:
    """A binary stream whose content replaces `path` when the block ends without an error.

    For writers that stream (a large report): nothing of `path` changes until the end, and an
    error or interruption inside the block leaves the old file and no temporary file behind.
    The path the user named is honoured, never replaced by a regular file: a symbolic link is
    written through (its target replaced atomically), and a device node or a FIFO is written
    to as it is (no atomicity is possible there; a FIFO no process reads is refused).
    """
    path = Path(path)
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    check_writable(path)
    if _is_special(path):
        with _written_through(path) as stream:
            yield stream
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    _sweep(path)
    handle, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, _mode_for(path))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


#: A temporary file of the old naming (no writer's pid) older than this is a dead writer's.
STALE_SECONDS = 3600.0


def _sweep(path: Path) -> None:
    """Remove the temporary files of earlier writers of `path` that died before renaming them
    (SIGKILL, a power cut): named `.NAME.PID.XXXXXXXX.tmp`, each is removed once no process
    has its PID (a name without one, of an older bench, once it is an hour old)."""
    prefix = f".{path.name}."
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        middle = name[len(prefix) : -len(".tmp")].split(".")
        if len(middle) == 2 and middle[0].isdigit():
            if _alive(int(middle[0])):
                continue
        elif len(middle) == 1:
            with contextlib.suppress(OSError):
                if time.time() - entry.stat(follow_symlinks=False).st_mtime < STALE_SECONDS:
                    continue
        else:
            continue
        with contextlib.suppress(OSError):
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # this process's own writer of the same path (another thread)
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True  # another user's live process
    except (ProcessLookupError, OverflowError, ValueError):
        return False
    return True


def _is_special(path: Path) -> bool:
    """A device node, FIFO or socket: written through, never replaced."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


@contextlib.contextmanager
def _written_through(path: Path) -> Iterator[IO[bytes]]:
    """A stream onto the special file itself (opened without waiting: a FIFO needs a reader)."""
    if stat.S_ISSOCK(os.stat(path).st_mode):
        raise OSError(f"{path} is a socket, not a file")
    try:
        handle = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OSError(f"{path} is a FIFO that no process reads") from None
        raise
    os.set_blocking(handle, True)
    with os.fdopen(handle, "wb") as stream:
        yield stream
        stream.flush()


def check_writable(path: Path) -> None:
    """Raise OSError (one line, naming the path) unless `path` could be written now.

    Checked before a run starts, so an unwritable report path costs no results: the path must
    not be a folder, and its nearest existing ancestor must be a writable folder (a special
    file, written through, must be writable itself; a symbolic link is judged by its target).
    """
    path = Path(path)
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    if _is_special(path):
        if not os.access(path, os.W_OK):
            raise PermissionError(f"{path} is not writable")
        if stat.S_ISSOCK(os.stat(path).st_mode):
            raise OSError(f"{path} is a socket, not a file")
        return
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a folder, not a file")
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise NotADirectoryError(f"{ancestor} is a file, so {path} cannot be created under it")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise PermissionError(f"the folder {ancestor} is not writable, so {path} cannot be written")
    if path.exists() and not os.access(path, os.W_OK):
        raise PermissionError(f"{path} is read-only")


def _mode_for(path: Path) -> int:
    """Keep an existing file's permissions; a new file gets 0666 minus the umask (as open does)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


#: Most bytes `read_text` reads (a CHANGELOG, a release record, a kill matrix are far smaller).
READ_LIMIT = 64 * 1024 * 1024


def read_text(path: Path, limit: int = READ_LIMIT) -> str:
    """The UTF-8 text of the regular file `path`; OSError (one line, naming the path) for
    anything else. Opening a FIFO blocks until a writer comes and a device never ends, so
    the file is opened without waiting and read only when it is a regular file."""
    path = Path(path)
    handle = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise OSError(errno.EINVAL, f"{path} is not a regular file (a FIFO or a device?)")
        os.set_blocking(handle, True)
        with os.fdopen(handle, "rb", closefd=False) as stream:
            data = stream.read(limit + 1)
    finally:
        os.close(handle)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"{path} is larger than {limit:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OSError(errno.EILSEQ, f"{path} is not UTF-8 text ({exc.reason})") from None
