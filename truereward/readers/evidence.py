"""How readers get at a run's evidence: bounded reads that refuse cleanly
and remember what they read.

:class:`Evidence` stands for one evidence location (a local path or an
fsspec URL). :meth:`Evidence.read_bytes` reads a file whole, up to a size
limit, and records its sha256 and size for the grade document. Failures
become refusals, never crashes:

- the file does not exist: ``EVIDENCE_MISSING`` (the run left nothing);
- it exists but is larger than ``max_bytes``, is a directory, or cannot be
  decoded where text is required: ``EVIDENCE_MALFORMED`` (the run's);
- an I/O error, a store that does not answer, fsspec missing for a URL:
  ``EVIDENCE_UNREADABLE`` (the grader's side, retried by default).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

from ..codes import Ungradable
from ..document import EvidenceDigest

__all__ = ["DEFAULT_MAX_BYTES", "Evidence"]

#: The largest evidence file read, by default: far above any real test
#: report, far below what would hurt the grader.
DEFAULT_MAX_BYTES = 64 << 20


@dataclass
class Evidence:
    """One evidence location. ``url`` is a local path or an fsspec URL;
    ``name`` is how the document names it (default: ``url``)."""

    url: str
    storage_options: dict[str, Any] = field(default_factory=dict)
    max_bytes: int = DEFAULT_MAX_BYTES
    name: str | None = None
    #: Digests of every file read through this object, in reading order.
    digests: list[EvidenceDigest] = field(default_factory=list)

    @property
    def is_local(self) -> bool:
        """Whether the evidence is a local path."""
        return "://" not in self.url or self.url.startswith(("file://", "local://"))

    def _local_path(self, relative: str | None) -> str:
        base = self.url.split("://", 1)[1] if "://" in self.url else self.url
        return os.path.join(base, relative) if relative else base

    def _remote_path(self, relative: str | None) -> str:
        return f"{self.url.rstrip('/')}/{relative}" if relative else self.url

    def describe(self, relative: str | None = None) -> str:
        """The location of ``relative`` (or of the evidence itself), for messages."""
        return self._local_path(relative) if self.is_local else self._remote_path(relative)

    def exists(self, relative: str | None = None) -> bool:
        """Whether the file (or directory) exists. I/O errors are
        ``EVIDENCE_UNREADABLE``."""
        if self.is_local:
            return os.path.exists(self._local_path(relative))
        fs, path = self._fs(relative)
        try:
            return bool(fs.exists(path))
        except Exception as error:  # any store failure is the grader's side
            raise Ungradable(
                "EVIDENCE_UNREADABLE", f"{self.describe(relative)}: {error}"
            ) from error

    def is_dir(self, relative: str | None = None) -> bool:
        """Whether the location is a directory. I/O errors are
        ``EVIDENCE_UNREADABLE``."""
        if self.is_local:
            return os.path.isdir(self._local_path(relative))
        fs, path = self._fs(relative)
        try:
            return bool(fs.isdir(path))
        except Exception as error:  # any store failure is the grader's side
            raise Ungradable(
                "EVIDENCE_UNREADABLE", f"{self.describe(relative)}: {error}"
            ) from error

    def read_bytes(self, relative: str | None = None) -> bytes:
        """The bytes of the evidence file (or of ``relative`` inside the
        evidence directory), recorded in :attr:`digests`."""
        where = self.describe(relative)
        data = self._read_local(where) if self.is_local else self._read_remote(relative, where)
        self.digests.append(
            EvidenceDigest(
                path=self.name if self.name and not relative else where,
                sha256=hashlib.sha256(data).hexdigest(),
                size=len(data),
            )
        )
        return data

    def read_text(self, relative: str | None = None) -> str:
        """The evidence as UTF-8 text (a BOM is dropped); undecodable bytes
        are ``EVIDENCE_MALFORMED``."""
        data = self.read_bytes(relative)
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise Ungradable(
                "EVIDENCE_MALFORMED",
                f"{self.describe(relative)}: not UTF-8 text (byte {error.start})",
            ) from None

    def _too_big(self, where: str, size: int) -> Ungradable:
        return Ungradable(
            "EVIDENCE_MALFORMED",
            f"{where}: {size} bytes is more than the {self.max_bytes} bytes a report may have",
        )

    def _read_local(self, where: str) -> bytes:
        try:
            with open(where, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size > self.max_bytes:
                    raise self._too_big(where, size)
                data = handle.read(self.max_bytes + 1)
        except FileNotFoundError:
            raise Ungradable("EVIDENCE_MISSING", f"{where}: no such file") from None
        except IsADirectoryError:
            raise Ungradable("EVIDENCE_MALFORMED", f"{where}: a directory, not a file") from None
        except NotADirectoryError:
            raise Ungradable(
                "EVIDENCE_MALFORMED", f"{where}: a file stands where a directory should be"
            ) from None
        except PermissionError as error:
            raise Ungradable("EVIDENCE_UNREADABLE", f"{where}: {error.strerror}") from None
        except OSError as error:
            raise Ungradable("EVIDENCE_UNREADABLE", f"{where}: {error.strerror or error}") from None
        if len(data) > self.max_bytes:  # it grew while being read
            raise self._too_big(where, len(data))
        return data

    def _fs(self, relative: str | None) -> tuple[Any, str]:
        try:
            import fsspec
        except ImportError:
            raise Ungradable(
                "EVIDENCE_UNREADABLE",
                f"{self.describe(relative)}: reading a URL "
                "needs fsspec (pip install 'truereward[fsspec]')",
            ) from None
        try:
            fs, path = fsspec.core.url_to_fs(self._remote_path(relative), **self.storage_options)
        except (ImportError, ValueError) as error:
            raise Ungradable("EVIDENCE_UNREADABLE", f"{self.describe(relative)}: {error}") from None
        return fs, path

    def _read_remote(self, relative: str | None, where: str) -> bytes:
        fs, path = self._fs(relative)
        try:
            info = fs.info(path)
            size = int(info.get("size") or 0)
            if info.get("type") == "directory":
                raise Ungradable("EVIDENCE_MALFORMED", f"{where}: a directory, not a file")
            if size > self.max_bytes:
                raise self._too_big(where, size)
            data: bytes = fs.cat_file(path)
        except Ungradable:
            raise
        except FileNotFoundError:
            raise Ungradable("EVIDENCE_MISSING", f"{where}: no such object") from None
        except Exception as error:  # any store failure is the grader's side
            raise Ungradable("EVIDENCE_UNREADABLE", f"{where}: {error}") from error
        if len(data) > self.max_bytes:
            raise self._too_big(where, len(data))
        return data
