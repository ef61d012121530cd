"""How readers get at a run's evidence: bounded reads that refuse cleanly
and remember what they read.

:class:`Evidence` is one evidence location (a local path or an fsspec
URL); :meth:`Evidence.read_bytes` reads a file whole up to a limit,
:meth:`Evidence.open` as a stream, both recording its sha256 and size, and
every failure is a refusal (missing, malformed, unreadable), never a crash.
docs/readers.md, "Reading a run's files", gives the rules.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..codes import Ungradable
from ..grade.document import EvidenceDigest
from ..util import safefile, urls

__all__ = ["DEFAULT_MAX_BYTES", "Evidence", "EvidenceStream", "Readable"]

#: The largest evidence file read, by default: far above any real test
#: report, far below what would hurt the grader.
DEFAULT_MAX_BYTES = safefile.LIMIT


class Readable(Protocol):
    """What a streaming parser reads from (an :class:`EvidenceStream`, or
    ``io.BytesIO``): ``read(size)`` bytes, ``b""`` at the end."""

    def read(self, size: int = -1, /) -> bytes: ...


class EvidenceStream:
    """One evidence file being read: :meth:`read` returns its next bytes
    (``b""`` at the end) and hashes them; more than ``limit`` bytes in all
    is ``EVIDENCE_MALFORMED``, an I/O error ``EVIDENCE_UNREADABLE``. Made by
    :meth:`Evidence.open`. ``expected`` is the size the file had when
    opened: reads ask for no more than that (and one byte, to see the end),
    so a small file costs no chunk-sized buffer."""

    def __init__(
        self,
        read: Callable[[int], bytes],
        where: str,
        limit: int,
        too_big: Callable[[str, int], Ungradable],
        expected: int = 0,
    ) -> None:
        self._read = read
        self._expected = expected
        self.where = where
        self._limit = limit
        self._too_big = too_big
        self._sha256 = hashlib.sha256()
        #: Bytes read so far.
        self.size = 0
        self._broken: Ungradable | None = None

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all the rest when negative); ``b""`` at the end."""
        if self._broken is not None:
            raise self._broken
        if size is None or size < 0:
            parts = []
            while part := self.read(safefile.CHUNK):
                parts.append(part)
            return b"".join(parts)
        if size == 0:
            return b""
        want = min(size, safefile.CHUNK, self._limit + 1 - self.size)
        if self.size < self._expected:
            want = min(want, self._expected - self.size + 1)
        try:
            data = self._read(want)
        except OSError as error:
            self._broken = Ungradable(
                "EVIDENCE_UNREADABLE", f"{self.where}: {error.strerror or error}"
            )
            raise self._broken from None
        except Exception as error:  # any store failure is the grader's side
            self._broken = Ungradable("EVIDENCE_UNREADABLE", f"{self.where}: {error}")
            raise self._broken from error
        self.size += len(data)
        if self.size > self._limit:  # it grew while being read
            self._broken = self._too_big(self.where, self.size)
            raise self._broken
        self._sha256.update(data)
        return data

    def drain(self) -> None:
        """Read (and hash) what is left."""
        while self.read(safefile.CHUNK):
            pass

    def hexdigest(self) -> str:
        """The sha256 of the bytes read so far."""
        return self._sha256.hexdigest()


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
    #: The evidence file's GET already under way (:func:`truereward.util.fetch.prefetch`),
    #: taken instead of a request of its own; only for the evidence itself.
    prefetched: Future[tuple[int, bytes | None]] | None = None

    @property
    def is_local(self) -> bool:
        """Whether the evidence is a local path."""
        return urls.is_local(self.url)

    def location(self, relative: str | None = None) -> str:
        """Where ``relative`` (or the evidence itself) is read from: a local
        path or a URL."""
        base = urls.path_or_url(self.url)
        if not relative:
            return base
        return os.path.join(base, relative) if self.is_local else urls.join(base, relative)

    def describe(self, relative: str | None = None) -> str:
        """How messages and digests name ``relative`` (or the evidence):
        relative to the run directory (``root``) when it lies inside, so a
        run's grade reads the same wherever the sweep is stored (a local
        directory, a bucket); else its full location."""
        where = self.location(relative)
        if self.root is None:
            return where
        root = urls.path_or_url(self.root)
        base = urls.join(root, "")
        return where[len(base) :] if where.startswith(base) else where

    def _record(self, relative: str | None, sha256: str, size: int) -> None:
        """Record the digest of a file read in :attr:`digests`, named
        ``name`` for the evidence itself, when given."""
        shown = self.name if self.name and not relative else self.describe(relative)
        self.digests.append(EvidenceDigest(path=shown, sha256=sha256, size=size))

    def exists(self, relative: str | None = None) -> bool:
        """Whether the file (or directory) exists (a symlink counts as
        existing: reading it is refused). I/O errors are
        ``EVIDENCE_UNREADABLE``."""
        if self.is_local:
            return os.path.lexists(self.location(relative))
        return self._ask(relative, "exists")

    def is_dir(self, relative: str | None = None) -> bool:
        """Whether the location is a directory, and not a symlink to one
        (:meth:`check_inside` refuses those). I/O errors are
        ``EVIDENCE_UNREADABLE``."""
        if self.is_local:
            where = self.location(relative)
            return os.path.isdir(where) and not os.path.islink(where)
        return self._ask(relative, "isdir")

    def _ask(self, relative: str | None, question: str) -> bool:
        """The store's ``question`` (``exists``, ``isdir``) of ``relative``;
        a failure to answer is the grader's (``EVIDENCE_UNREADABLE``)."""
        fs, path = self._fs(relative)
        try:
            return bool(getattr(fs, question)(path))
        except Exception as error:  # any store failure is the grader's side
            raise Ungradable(
                "EVIDENCE_UNREADABLE", f"{self.describe(relative)}: {error}"
            ) from error

    def read_bytes(self, relative: str | None = None) -> bytes:
        """The bytes of the evidence file (or of ``relative`` inside the
        evidence directory), recorded in :attr:`digests`."""
        where = self.describe(relative)
        if self.is_local:
            data = self._read_local(self.location(relative), where)
        else:
            data = self._read_remote(relative, where)
        self._record(relative, hashlib.sha256(data).hexdigest(), len(data))
        return data

    @contextmanager
    def open(self, relative: str | None = None) -> Iterator[EvidenceStream]:
        """The evidence file (or ``relative`` inside the evidence directory)
        as an :class:`EvidenceStream`, with the refusals of
        :meth:`read_bytes`. On leaving, whatever the reader did not read is
        read and hashed, and the file's digest is recorded in
        :attr:`digests` (none when the file is too large or unreadable)."""
        where = self.describe(relative)
        if self.is_local:
            opened = self._open_local(self.location(relative), where)
        else:
            opened = self._open_remote(relative, where)
        with opened as (read, size):
            stream = EvidenceStream(read, where, self.max_bytes, self._too_big, size)
            try:
                yield stream
            finally:
                stream.drain()
                self._record(relative, stream.hexdigest(), stream.size)

    def digest(self, relative: str | None = None) -> None:
        """Read the file to its end and record its digest in :attr:`digests`,
        holding a chunk at a time (the refusals of :meth:`open`)."""
        with self.open(relative):
            pass

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

    def refuse_outside(self, path: str, where: str) -> None:
        """``EVIDENCE_MALFORMED`` (naming it ``where``) when the local
        ``path`` leads out of the run directory (``root``) through a
        symlinked directory."""
        if self.root is None or not self.is_local:
            return
        root = urls.local_path(self.root)
        if os.path.lexists(path) and not safefile.inside(os.path.dirname(path), root):
            raise Ungradable(
                "EVIDENCE_MALFORMED",
                f"{where}: resolves outside the run directory (through a symlink): "
                "evidence must be the run's own",
            )

    def _read_local(self, path: str, where: str) -> bytes:
        self.refuse_outside(path, where)
        try:
            return safefile.read_regular(path, limit=self.max_bytes)
        except OSError as error:
            raise self._local_refusal(where, error) from None

    @contextmanager
    def _open_local(self, path: str, where: str) -> Iterator[tuple[Callable[[int], bytes], int]]:
        """A function reading the next bytes of the local file ``path``
        (named ``where`` in refusals), opened by
        :func:`truereward.util.safefile.opened` (refusals as for
        :meth:`_read_local`), and the file's size."""
        self.refuse_outside(path, where)
        with ExitStack() as stack:
            try:
                fd = stack.enter_context(safefile.opened(path))
                size = os.fstat(fd).st_size
                if size > self.max_bytes:
                    raise safefile.TooLarge(path, size, self.max_bytes)
            except OSError as error:
                raise self._local_refusal(where, error) from None
            yield (lambda count: os.read(fd, count)), size

    def _local_refusal(self, where: str, error: OSError) -> Ungradable:
        """The refusal for ``error``, met opening or reading the local file ``where``."""
        if isinstance(error, FileNotFoundError):
            return Ungradable("EVIDENCE_MISSING", f"{where}: no such file")
        if isinstance(error, safefile.NotAFile):
            why = (
                "a symlink: evidence is read without following links"
                if error.kind == "a symlink"
                else f"{error.kind}, not a file"
            )
            return Ungradable("EVIDENCE_MALFORMED", f"{where}: {why}")
        if isinstance(error, safefile.TooLarge):
            return self._too_big(where, error.size)
        if isinstance(error, NotADirectoryError):
            return Ungradable(
                "EVIDENCE_MALFORMED", f"{where}: a file stands where a directory should be"
            )
        if isinstance(error, PermissionError):
            return Ungradable("EVIDENCE_UNREADABLE", f"{where}: {error.strerror}")
        return Ungradable("EVIDENCE_UNREADABLE", f"{where}: {error.strerror or error}")

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
            fs, path = fsspec.core.url_to_fs(self.location(relative), **self.storage_options)
        except (ImportError, ValueError) as error:
            raise Ungradable("EVIDENCE_UNREADABLE", f"{self.describe(relative)}: {error}") from None
        return fs, path

    @staticmethod
    def _remote_refusal(where: str, error: Exception) -> Ungradable:
        """The refusal for ``error``, met reading the object ``where``: a
        missing object is the run's (``EVIDENCE_MISSING``), any other store
        failure the grader's side (``EVIDENCE_UNREADABLE``)."""
        if isinstance(error, FileNotFoundError):
            return Ungradable("EVIDENCE_MISSING", f"{where}: no such file")
        return Ungradable("EVIDENCE_UNREADABLE", f"{where}: {error}")

    def _taken(self, relative: str | None, where: str) -> bytes | None:
        """The prefetched bytes of the evidence itself, when they came
        (``None``: there was no prefetch, or its object was too large for
        one, and is to be read as usual). Its errors are this read's."""
        started, self.prefetched = self.prefetched, None
        if started is None or relative is not None:
            return None
        try:
            size, data = started.result()
        except Exception as error:  # any store failure is the grader's side
            raise self._remote_refusal(where, error) from error
        if data is None and size > self.max_bytes:
            raise self._too_big(where, size)
        return data

    def _read_remote(self, relative: str | None, where: str) -> bytes:
        """One request on S3 (:func:`truereward.util.fetch.fetch`): the size comes
        with the answer, and a body over ``max_bytes`` is never read."""
        from ..util.fetch import fetch

        taken = self._taken(relative, where)
        if taken is not None:
            return taken
        fs, path = self._fs(relative)
        try:
            size, data = fetch(fs, path, self.max_bytes)
        except IsADirectoryError:
            raise Ungradable("EVIDENCE_MALFORMED", f"{where}: a directory, not a file") from None
        except Exception as error:  # any store failure is the grader's side
            raise self._remote_refusal(where, error) from error
        if data is None:
            raise self._too_big(where, size)
        return data

    @contextmanager
    def _open_remote(
        self, relative: str | None, where: str
    ) -> Iterator[tuple[Callable[[int], bytes], int]]:
        """A function reading the next bytes of the object at ``relative``
        (refusals as for :meth:`_read_remote`), and the size it says it has."""
        from ..util.fetch import opened

        taken = self._taken(relative, where)
        if taken is not None:
            yield io.BytesIO(taken).read, len(taken)
            return
        fs, path = self._fs(relative)
        with ExitStack() as stack:
            try:
                size, read = stack.enter_context(opened(fs, path))
            except IsADirectoryError:
                raise Ungradable(
                    "EVIDENCE_MALFORMED", f"{where}: a directory, not a file"
                ) from None
            except Exception as error:  # any store failure is the grader's side
                raise self._remote_refusal(where, error) from error
            if size > self.max_bytes:
                raise self._too_big(where, size)
            yield read, size
