"""A store over any other fsspec filesystem.

Without conditional writes in the backend, "write if absent" and
"compare-and-swap" are a check then a write: atomic for ``memory://`` (one
process, one lock), not for other backends (``gcs://``, ``az://``...), which
are refused unless the caller opts into unconditional writes by name
(``unconditional=True``, ``--unconditional``), where two racing publishers
can both believe they won. ETags are the content's MD5, as S3's.
docs/design.md, "The publishing protocol".
"""

from __future__ import annotations

import threading
from typing import Any

from ..grade.files import NAMES
from ..util import urls
from .errors import PublishError
from .objects import PreconditionFailed, md5_hex

__all__ = ["CONDITIONAL_PROTOCOLS", "FsspecStore"]

#: fsspec protocols whose check-then-write is atomic under a process lock.
CONDITIONAL_PROTOCOLS = frozenset({"memory"})

_LOCK = threading.RLock()
#: Grade digests of memory:// objects (the filesystem keeps no metadata of
#: its own), by path; it lives as long as the filesystem, in this process.
_GRADES: dict[str, str] = {}


class FsspecStore:
    """The files of one grade under one fsspec URL, written with check-then-write
    under a process-wide lock."""

    def __init__(self, url: str, options: dict[str, Any], *, unconditional: bool) -> None:
        import fsspec

        protocol = urls.protocol(url)
        #: memory:// keeps the grade digests beside the objects; others none.
        self.has_metadata = protocol in CONDITIONAL_PROTOCOLS
        if protocol not in CONDITIONAL_PROTOCOLS and not unconditional:
            raise PublishError(
                f"{url}: the {protocol}:// backend cannot write conditionally, so a racing "
                "publisher could overwrite a grade; pass unconditional=True (CLI: "
                "--unconditional) to publish there anyway"
            )
        try:
            self.fs, self.root = fsspec.core.url_to_fs(url, **options)
        except (ImportError, ValueError) as error:
            raise PublishError(f"{url}: {error}") from error
        self.location = urls.join(url)

    def _path(self, name: str) -> str:
        return urls.join(self.root, name)

    def etags(self) -> dict[str, str]:
        with _LOCK:
            found = {}
            for name in NAMES:
                data = self._read(name)
                if data is not None:
                    found[name] = md5_hex(data)
            return found

    def etag(self, name: str) -> str | None:
        data = self._read(name)
        return None if data is None else md5_hex(data)

    def read(self, name: str) -> bytes | None:
        return self._read(name)

    def _read(self, name: str) -> bytes | None:
        try:
            data: bytes = self.fs.cat_file(self._path(name))
        except FileNotFoundError:
            return None
        except OSError as error:
            raise PublishError(f"{self.location}/{name}: {error}") from error
        return data

    def _write(self, name: str, data: bytes) -> None:
        try:
            self.fs.makedirs(self.root, exist_ok=True)
            self.fs.pipe_file(self._path(name), data)
        except OSError as error:
            raise PublishError(f"{self.location}/{name}: {error}") from error

    def create(self, name: str, data: bytes) -> None:
        with _LOCK:
            if self._read(name) is not None:
                raise PreconditionFailed(name)
            self._write(name, data)

    def replace(self, name: str, data: bytes, etag: str) -> None:
        with _LOCK:
            current = self._read(name)
            if current is None or md5_hex(current) != etag:
                raise PreconditionFailed(name)
            self._write(name, data)

    def put(self, name: str, data: bytes, grade: str | None = None) -> None:
        with _LOCK:
            self._write(name, data)
            if self.has_metadata:
                if grade:
                    _GRADES[self._path(name)] = grade
                else:
                    _GRADES.pop(self._path(name), None)

    def grade_of(self, name: str) -> str | None:
        with _LOCK:
            return _GRADES.get(self._path(name)) if self._read(name) is not None else None

    def delete(self, name: str, etag: str) -> None:
        with _LOCK:
            current = self._read(name)
            if current is None:
                return
            if md5_hex(current) != etag:
                raise PreconditionFailed(name)
            _GRADES.pop(self._path(name), None)
            try:
                self.fs.rm_file(self._path(name))
            except FileNotFoundError:
                return
            except OSError as error:
                raise PublishError(f"{self.location}/{name}: {error}") from error
