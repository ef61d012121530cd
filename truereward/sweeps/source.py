"""Where a sweep's grades are: a directory or an fsspec URL.

A sweep's immediate subdirectories are its runs (a symlinked entry is not
one: :meth:`SweepSource.scan` says so; dot-entries and plain files are
skipped), each with ``<run id>/grade.json``, or, graded in place,
``<run id>/logs/verifier/grade.json`` (:attr:`SweepSource.in_place`). Local
paths are read with the standard library, other URLs with fsspec (imported
only then). Runs are listed once, sorted, and read in order, one at a time
(up to 64 at once on an object store): memory holds the names and those
documents. docs/sweeps.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..publishing import S3_PROTOCOLS
from ..publishing.index import list_pages
from ..util import safefile, urls
from ..util.exceptions import TruerewardError
from ..util.io import read_ahead
from .parse import parse_grade
from .record import RunRecord

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = [
    "GRADE_FILE",
    "MAX_GRADE_BYTES",
    "SweepNotFound",
    "SweepSource",
    "grouped_records",
    "paired_records",
]

GRADE_FILE = "grade.json"
#: Where a run graded in place keeps its grade (the flow's default target).
IN_PLACE = "logs/verifier"
#: A grade.json larger than this is reported unreadable rather than read
#: (documents are kilobytes; this bounds the memory one run can take): the
#: package's one read limit, :data:`truereward.util.safefile.LIMIT`.
MAX_GRADE_BYTES = safefile.LIMIT


class SweepNotFound(TruerewardError):
    """The sweep location does not exist, is not a directory, or cannot be
    listed. The message names it."""


class SweepSource:
    """The runs of one sweep location (see the module docstring).

    ``storage_options`` go to fsspec for non-local URLs. :meth:`run_names`
    lists the runs (sorted); :meth:`record` reads one run; :meth:`records`
    reads them all, lazily, in name order.
    """

    def __init__(self, url: str, storage_options: Mapping[str, Any] | None = None) -> None:
        self.url = url
        self._local = urls.local_or_none(url)
        self._storage_options = dict(storage_options or {})
        self._fs: Any = None
        self._root = ""
        #: Whether a grade was found in a run's own ``logs/verifier``.
        self.in_place = False
        if self._local is None:
            self._connect()

    def _connect(self) -> None:
        try:
            from fsspec.core import url_to_fs
        except ImportError:
            raise SweepNotFound(
                f"{self.url}: reading a sweep from this URL needs fsspec "
                "(pip install 'truereward[fsspec]')"
            ) from None
        from ..util.io import OBJECT_STORE_IO, with_connections

        options = self._storage_options
        if urls.protocol(self.url) in S3_PROTOCOLS:
            # Connections for the grades read at once (records()), the pool
            # grading's client for this store has: one client serves both.
            options = with_connections(options, OBJECT_STORE_IO)
        try:
            self._fs, self._root = url_to_fs(self.url, **options)
        except (ValueError, ImportError, OSError) as error:
            raise SweepNotFound(f"{self.url}: {error}") from None
        self._root = urls.join(self._root)

    def run_names(self) -> list[str]:
        """The run ids (subdirectory names), sorted. :class:`SweepNotFound`
        when the location is missing or not a directory."""
        return self.scan()[0]

    def scan(self) -> tuple[list[str], list[tuple[str, str]]]:
        """The runs (sorted) and the entries that are not runs, each with
        why (sorted): a symlink (a run is a real directory, never reached
        through a link: it could lead anywhere, and grades are written
        inside runs), a name starting with ``.``, a device or FIFO. Plain
        files beside the runs (a sweep report, a README) are neither.
        :class:`SweepNotFound` when the location is missing or not a
        directory."""
        if self._local is not None:
            return self._local_scan(self._local)
        if urls.protocol(self.url) in S3_PROTOCOLS:
            return self._s3_scan()
        try:
            entries = self._fs.ls(self._root, detail=True)
        except FileNotFoundError:
            raise SweepNotFound(f"{self.url}: no such sweep") from None
        except OSError as error:
            raise SweepNotFound(f"{self.url}: cannot list: {error}") from None
        names, skipped = _runs_of(
            urls.name(str(entry["name"])) for entry in entries if entry.get("type") == "directory"
        )
        if not names and not skipped and not self._fs.isdir(self._root):
            raise SweepNotFound(f"{self.url}: no such sweep")
        return names, skipped

    def _s3_scan(self) -> tuple[list[str], list[tuple[str, str]]]:
        """:meth:`scan` on S3: the listing read a page at a time, keeping
        only the names (a sweep of 100,000 runs is 100 requests; s3fs's
        ``ls`` would keep a dict a run for the flow's whole life)."""
        bucket, key = urls.bucket_and_key(self.url)
        prefix = urls.key_prefix(key)
        objects = 0

        def directories() -> Iterator[str]:
            nonlocal objects
            # A page is listed while the one before is read.
            for answer in read_ahead(list_pages(self._fs, bucket, prefix, delimiter="/"), 2):
                objects += len(answer.get("Contents", ()))
                for item in answer.get("CommonPrefixes", ()):
                    yield str(item["Prefix"])[len(prefix) :].rstrip("/")

        try:
            names, skipped = _runs_of(directories())
        except OSError as error:
            raise SweepNotFound(f"{self.url}: cannot list: {error}") from None
        if not names and not skipped and not objects:
            raise SweepNotFound(f"{self.url}: no such sweep")
        return names, skipped

    def _local_scan(self, path: str) -> tuple[list[str], list[tuple[str, str]]]:
        directories: list[str] = []
        skipped: list[tuple[str, str]] = []
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if entry.is_symlink():
                        skipped.append((entry.name, "a symlink: a run is a real directory"))
                    elif not entry.is_dir(follow_symlinks=False):
                        if not entry.is_file(follow_symlinks=False):
                            skipped.append((entry.name, "not a directory (a device or FIFO)"))
                    else:
                        directories.append(entry.name)
        except FileNotFoundError:
            raise SweepNotFound(f"{self.url}: no such directory") from None
        except NotADirectoryError:
            raise SweepNotFound(f"{self.url}: not a directory") from None
        except OSError as error:
            raise SweepNotFound(f"{self.url}: cannot list: {error.strerror or error}") from None
        names, hidden = _runs_of(directories)
        return names, sorted(skipped + hidden)

    def read(self, run: str, started: Future[tuple[int, bytes | None]] | None = None) -> bytes:
        """The bytes of ``run``'s grade.json (``<run>/grade.json``, else
        ``<run>/logs/verifier/grade.json``). ``FileNotFoundError`` when it
        has none; ``OSError`` when it cannot be read or is too large.
        ``started``: the GET of ``<run>/grade.json`` already under way
        (:func:`~truereward.util.fetch.prefetch`)."""
        try:
            return self._read(f"{run}/{GRADE_FILE}", started)
        except FileNotFoundError:
            pass
        try:
            data = self._read(f"{run}/{IN_PLACE}/{GRADE_FILE}")
        except NotADirectoryError:  # a file named logs: no grade there either
            raise FileNotFoundError(f"{run}: no {GRADE_FILE}") from None
        self.in_place = True
        return data

    def _read(
        self, relative: str, started: Future[tuple[int, bytes | None]] | None = None
    ) -> bytes:
        if self._local is not None:
            return _read_local(os.path.join(self._local, relative))
        from ..util.fetch import fetch

        try:
            if started is not None:
                size, data = started.result()
            else:
                size, data = fetch(self._fs, urls.join(self._root, relative), MAX_GRADE_BYTES)
        except IsADirectoryError:
            raise FileNotFoundError(relative) from None
        if data is None:
            raise OSError(f"{size} bytes is larger than {MAX_GRADE_BYTES} bytes")
        return data

    def record(
        self,
        run: str,
        *,
        strict: bool = False,
        with_cases: bool = False,
        started: Future[tuple[int, bytes | None]] | None = None,
    ) -> RunRecord:
        """The record of one run; ``unreadable`` (never an exception) when
        its grade.json is missing or bad. ``started``: as for :meth:`read`."""
        try:
            data = self.read(run, started)
        except FileNotFoundError:
            return RunRecord.unreadable(run, f"no {GRADE_FILE}")
        except OSError as error:
            reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
            return RunRecord.unreadable(run, f"{GRADE_FILE}: cannot read: {reason}")
        return parse_grade(data, run, strict=strict, with_cases=with_cases)

    def records(self, *, strict: bool = False, with_cases: bool = False) -> Iterator[RunRecord]:
        """Every run's record, in name order, read lazily: one at a time on a
        local disk; on an object store, where each grade is a round trip, up
        to :data:`~truereward.util.io.OBJECT_STORE_IO` at once (docs/scale.md,
        "The I/O budget"): on S3 as GETs on the store's event loop, parsed
        here as they come in order, elsewhere on the I/O threads."""
        from ..util.fetch import is_s3
        from ..util.io import LOCAL_IO, OBJECT_STORE_IO, ordered_map, started_ahead

        names = self.run_names()
        if self._local is None and is_s3(self._fs):
            # On S3 each read is one coroutine on the event loop s3fs runs
            # anyway, not a thread that hops to that loop three times a read
            # (docs/scale.md, "The I/O budget").
            started = ((run, self._prefetch(run)) for run in names)
            for run, future in started_ahead(started, OBJECT_STORE_IO - 1):
                yield self.record(run, strict=strict, with_cases=with_cases, started=future)
            return
        budget = LOCAL_IO if self._local is not None else OBJECT_STORE_IO

        def record(run: str) -> RunRecord:
            return self.record(run, strict=strict, with_cases=with_cases)

        yield from ordered_map(record, names, budget)

    def _prefetch(self, run: str) -> Future[tuple[int, bytes | None]] | None:
        from ..util.fetch import prefetch

        return prefetch(self._fs, urls.join(self._root, f"{run}/{GRADE_FILE}"), MAX_GRADE_BYTES)


def _read_local(path: str) -> bytes:
    # Non-blocking and without following a final symlink, so a FIFO or a
    # link planted as grade.json can neither hang the reader nor point it
    # elsewhere; only a regular file of bounded size is read.
    return safefile.read_regular(path, limit=MAX_GRADE_BYTES)


def paired_records(
    baseline: SweepSource, candidate: SweepSource, *, strict: bool = False
) -> Iterator[tuple[str, RunRecord | None, RunRecord | None]]:
    """``(run id, baseline record, candidate record)`` for every run id of
    either sweep, in id order, read lazily (``None`` where a sweep has no
    such run). Both sweeps are listed before the first read (a missing
    sweep fails early)."""
    for run, records in grouped_records([baseline, candidate], strict=strict, with_cases=False):
        yield run, records[0], records[1]


def grouped_records(
    sources: Sequence[SweepSource], *, strict: bool = False, with_cases: bool = True
) -> Iterator[tuple[str, list[RunRecord | None]]]:
    """``(run id, [record or None per sweep])`` for every run id of any of
    the sweeps, in id order, read lazily one run at a time. Every sweep is
    listed before the first read (a missing sweep fails early)."""
    listed = [set(source.run_names()) for source in sources]
    for run in sorted(set().union(*listed)):
        yield (
            run,
            [
                source.record(run, strict=strict, with_cases=with_cases) if run in names else None
                for source, names in zip(sources, listed, strict=True)
            ],
        )


def _runs_of(directories: Iterable[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The runs among a listing's directory names (sorted) and the names
    skipped, each with why (sorted): a name starting with ``.``."""
    names: set[str] = set()
    skipped: list[tuple[str, str]] = []
    for name in directories:
        if name.startswith("."):
            skipped.append((name, "its name starts with '.'"))
        elif name:
            names.add(name)
    return sorted(names), sorted(skipped)
