"""How readers get at a run's evidence: bounded reads that refuse cleanly
and remember what they read.

:class:`Evidence` stands for one evidence location (a local path or an
fsspec URL). :meth:`Evidence.read_bytes` reads a file whole, up to a size
limit, and records its sha256 and size for the grade document. Failures
become refusals, never crashes:

- the file does not exist: ``EVIDENCE_MISSING`` (the run left nothing);
- it exists but is larger than ``max_bytes``, is not a regular file (a
  directory, a FIFO, a device such as ``/dev/zero``), is a **symlink**
  (evidence is read without following links: a link to another run's report
  or to ``/etc/shadow`` is never read, and leaves no digest), resolves
  **outside the run** (``root``: the run directory, when the evidence
  belongs to one; a symlinked directory on the way out is refused too), or
  cannot be decoded where text is required: ``EVIDENCE_MALFORMED``, the
  run's doing;
- an I/O error, a store that does not answer, fsspec missing for a URL:
  ``EVIDENCE_UNREADABLE`` (the grader's side, retried by default).

Local files are read through :mod:`truereward.safefile`: never blocking on
a FIFO, in chunks (no buffer sized by the limit), up to ``max_bytes``.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

from .. import safefile
from ..codes import Ungradable
from ..document import EvidenceDigest

__all__ = ["DEFAULT_MAX_BYTES", "Evidence"]

#: The largest evidence file read, by default: far above any real test
#: report, far below what would hurt the grader.
DEFAULT_MAX_BYTES = safefile.LIMIT


@dataclass
class Evidence:
    """One evidence location. ``url`` is a local path or an fsspec URL;
    ``name`` is how the document names it (default: ``url``); ``root`` is
    the run directory it belongs to, when it does (a local path that
    resolves outside it is refused)."""

    url: str
    storage_options: dict[str, Any] = field(default_factory=dict)
    max_bytes: int = DEFAULT_MAX_BYTES
    name: str | None = None
    root: str | None = None
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
        """Whether the file (or directory) exists (a symlink counts as
        existing: reading it is refused). I/O errors are
        ``EVIDENCE_UNREADABLE``."""
        if self.is_local:
            return os.path.lexists(self._local_path(relative))
        fs, path = self._fs(relative)
        try:
            return bool(fs.exists(path))
        except Exception as error:  # any store failure is the grader's side
            raise Ungradable(
                "EVIDENCE_UNREADABLE", f"{self.describe(relative)}: {error}"
            ) from error

    def is_dir(self, relative: str | None = None) -> bool:
        """Whether the location is a directory, and not a symlink to one
        (:meth:`check_inside` refuses those). I/O errors are
        ``EVIDENCE_UNREADABLE``."""
        if self.is_local:
            where = self._local_path(relative)
            return os.path.isdir(where) and not os.path.islink(where)
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

    def refuse_outside(self, where: str) -> None:
        """``EVIDENCE_MALFORMED`` when the local path ``where`` leads out of
        the run directory (``root``) through a symlinked directory."""
        if self.root is None or not self.is_local:
            return
        root = self.root.split("://", 1)[1] if "://" in self.root else self.root
        if os.path.lexists(where) and not safefile.inside(os.path.dirname(where), root):
            raise Ungradable(
                "EVIDENCE_MALFORMED",
                f"{where}: resolves outside the run directory (through a symlink): "
                "evidence must be the run's own",
            )

    def _read_local(self, where: str) -> bytes:
        self.refuse_outside(where)
        try:
            return safefile.read_regular(where, limit=self.max_bytes)
        except FileNotFoundError:
            raise Ungradable("EVIDENCE_MISSING", f"{where}: no such file") from None
        except safefile.NotAFile as error:
            why = (
                "a symlink: evidence is read without following links"
                if error.kind == "a symlink"
                else f"{error.kind}, not a file"
            )
            raise Ungradable("EVIDENCE_MALFORMED", f"{where}: {why}") from None
        except safefile.TooLarge as error:
            raise self._too_big(where, error.size) from None
        except NotADirectoryError:
            raise Ungradable(
                "EVIDENCE_MALFORMED", f"{where}: a file stands where a directory should be"
            ) from None
        except PermissionError as error:
            raise Ungradable("EVIDENCE_UNREADABLE", f"{where}: {error.strerror}") from None
        except OSError as error:
            raise Ungradable("EVIDENCE_UNREADABLE", f"{where}: {error.strerror or error}") from None

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
