"""Reading a local file that may be hostile: the one way the package opens
evidence, task specs, stored grades and the files of a logs directory (and,
with :func:`open_directory`, the directory a grade is written into).

A file is opened without following a final symlink and without blocking,
read only when it is a regular file, in chunks, up to a limit (:data:`LIMIT`
by default); :func:`inside` and :func:`same_file` keep reads inside a run
and writes off the evidence. Errors are ``OSError`` subclasses:
:class:`NotAFile` and :class:`TooLarge` are the run's doing. docs/hostile.md,
"Reading a file", gives the rules.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from .exceptions import TruerewardError

__all__ = [
    "CHUNK",
    "LIMIT",
    "NotAFile",
    "TooLarge",
    "inside",
    "open_directory",
    "opened",
    "read_regular",
    "same_file",
]

#: The largest file read by default.
LIMIT = 64 << 20
#: Bytes read at a time.
CHUNK = 1 << 20

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class NotAFile(TruerewardError, OSError):
    """The path is not a regular file: ``kind`` says what it is (``a
    symlink``, ``a directory``, ``a FIFO``, ``a character device``...)."""

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file", path)
        self.kind = kind


class TooLarge(TruerewardError, OSError):
    """The file is larger than the limit it was read under."""

    def __init__(self, path: str, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{size} bytes is more than the {limit} bytes allowed", path)
        self.size = size
        self.limit = limit


def _kind(mode: int) -> str:
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return "not a regular file"


@contextmanager
def opened(path: str, *, dir_fd: int | None = None) -> Iterator[int]:
    """A descriptor on the regular file ``path`` (relative to ``dir_fd``
    when given), opened without following a final symlink and without
    blocking; :class:`NotAFile` for anything else. Closed on exit."""
    try:
        fd = os.open(
            path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd
        )
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotAFile(path, "a symlink") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotAFile(path, _kind(mode))
        os.set_blocking(fd, True)  # a regular file: reads may block as usual
        yield fd
    finally:
        os.close(fd)


def read_regular(path: str, *, limit: int = LIMIT, dir_fd: int | None = None) -> bytes:
    """The bytes of the regular file ``path`` (module docstring):
    :class:`NotAFile`, :class:`TooLarge`, ``FileNotFoundError`` or another
    ``OSError``."""
    with opened(path, dir_fd=dir_fd) as fd:
        size = os.fstat(fd).st_size
        if size > limit:
            raise TooLarge(path, size, limit)
        chunks = []
        total = 0
        while chunk := os.read(fd, min(CHUNK, limit + 1 - total) or 1):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # it grew while being read
                raise TooLarge(path, total, limit)
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def open_directory(path: str) -> int:
    """A descriptor on the directory ``path`` (the caller closes it), opened
    without following a final symlink: :class:`NotAFile` (``a symlink``)
    when ``path`` is a symlink, even to a directory; ``NotADirectoryError``
    when it is anything else but a directory; ``FileNotFoundError`` when
    it is absent; another ``OSError`` when it cannot be opened."""
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path):
            raise NotAFile(path, "a symlink") from None
        raise


def inside(path: str, root: str) -> bool:
    """Whether ``path`` resolves (symlinks followed) to ``root`` or a path
    under it.

    A path written under ``root`` (no ``.``, ``..`` or empty component after
    it) none of whose components below ``root`` is a symlink resolves under
    ``root`` wherever ``root`` itself leads: that is checked with one
    ``lstat`` per component below ``root``. Anything else (a symlink below
    ``root``, a missing component, a path written elsewhere) is decided by
    resolving both (``realpath``: an ``lstat`` per component of each, which
    cost a grader 60 system calls a run).
    """
    parts = _below(path, root)
    if parts is not None:
        current = root.rstrip(os.sep) or os.sep
        for part in parts:
            current = os.path.join(current, part)
            try:
                if stat.S_ISLNK(os.lstat(current).st_mode):
                    break
            except OSError:
                break
        else:
            return True
    resolved, base = os.path.realpath(path), os.path.realpath(root)
    return resolved == base or resolved.startswith(base.rstrip(os.sep) + os.sep)


def _below(path: str, root: str) -> list[str] | None:
    """The components of ``path`` after ``root`` when ``path`` is written
    as ``root`` followed by plain names; ``None`` otherwise."""
    base = root.rstrip(os.sep)
    if path.rstrip(os.sep) == base:
        return []
    if not base and not root.startswith(os.sep):
        return None  # an empty root names nothing
    if not path.startswith(base + os.sep):
        return None
    parts = path[len(base) + 1 :].rstrip(os.sep).split(os.sep)
    if any(part in ("", ".", "..") for part in parts):
        return None
    return parts


def same_file(left: str, right: str) -> bool:
    """Whether the local paths ``left`` and ``right`` both lead (symlinks
    followed) to one existing file: the same device and inode (a hard link
    counts as the same file). A path that leads to nothing is no file, so
    never the same as another. Two stats, where resolving both paths
    (``realpath``) costs an ``lstat`` per component of each."""
    here, there = _identity(left), _identity(right)
    return here is not None and here == there


def _identity(path: str) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except (OSError, ValueError):  # absent, unreadable, or a NUL in the name
        return None
    return (status.st_dev, status.st_ino)
