"""Writing one local file whole or not at all, for files that are not
grades (an HTML sweep report): a temporary file in the same directory,
flushed to disk, then moved over the path with ``os.replace`` (a symlink at
the path is replaced, never written through). Grades have their own,
conditional publisher (:mod:`truereward.publishing.local`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile

__all__ = ["write_whole"]


def write_whole(path: str, data: bytes) -> None:
    """Write ``data`` at ``path`` atomically, mode 0666 under the umask.
    ``OSError`` when it cannot be written (no temporary file is left)."""
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(
        dir=directory, prefix=f".{os.path.basename(path)}.", suffix=".tmp"
    )
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        umask = os.umask(0)  # mkstemp makes the file 0600; this is an ordinary file
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
