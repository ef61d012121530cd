"""What stands at the targets of many runs under one S3 prefix, from one
listing read page by page.

:class:`TargetIndex` reads the listing of the prefix the runs' targets
share lazily, as the plan reaches each run: runs are planned in the order
S3 lists keys (:func:`listing_order`), so listing and plan advance
together and memory holds one page. A run looked up out of that order is
listed alone; a store that cannot be listed answers ``None`` (the caller
asks per run). docs/scale.md, "Listing at scale".
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..grade.files import NAMES, PREVIOUS_GRADE
from ..util import urls
from ..util.io import read_ahead

__all__ = ["Standing", "TargetIndex", "list_pages", "listing_order"]

#: The names a run's entry in the index keeps.
_KEPT = frozenset((*NAMES, PREVIOUS_GRADE))


def listing_order(run: str) -> bytes:
    """The key that orders runs as S3 lists their objects: by the UTF-8
    bytes of ``<run>/`` (so ``run-1.5`` comes before ``run-1``, as
    ``.`` sorts before ``/``)."""
    return f"{run}/".encode()


def list_pages(
    fs: Any,
    bucket: str,
    prefix: str,
    *,
    delimiter: str | None = None,
    after: str | None = None,
    page_size: int | None = None,
) -> Iterator[dict[str, Any]]:
    """The answers of ``ListObjectsV2`` under ``prefix`` on the S3
    filesystem ``fs``, one page (one request, up to 1,000 keys, or
    ``page_size``) at a time: nothing is cached (s3fs's ``ls`` keeps a
    whole listing, a dict a key, for the life of the filesystem).
    ``delimiter`` groups keys into ``CommonPrefixes``; ``after``: keys
    after it only."""
    token: str | None = None
    while True:
        extra: dict[str, Any] = {"ContinuationToken": token} if token else {}
        if after is not None and not token:
            extra["StartAfter"] = after
        if delimiter is not None:
            extra["Delimiter"] = delimiter
        if page_size is not None:
            extra["MaxKeys"] = page_size
        answer: dict[str, Any] = fs.call_s3(
            "list_objects_v2", Bucket=bucket, Prefix=prefix, **extra
        )
        yield answer
        token = answer.get("NextContinuationToken")
        if not answer.get("IsTruncated") or not token:
            return


@dataclass(frozen=True)
class Standing:
    """Our objects standing at one run's target: name -> (ETag, size)."""

    objects: Mapping[str, tuple[str, int]]

    def etags(self) -> dict[str, str]:
        """Name -> ETag (unquoted), as a publisher takes a listing."""
        return {name: etag for name, (etag, _) in self.objects.items()}


class TargetIndex:
    """The targets ``<base>/<run>/<inner>`` of the runs under ``base`` on
    S3 (module docstring). ``inner`` is ``""`` for a target of its own, or
    the path of the target inside each run (``logs/verifier``)."""

    def __init__(
        self, fs: Any, base: str, inner: str = "", start: str | None = None, runs: int | None = None
    ) -> None:
        self._fs = fs
        self._start = start
        self._bucket, key = urls.bucket_and_key(base)
        self._base = urls.key_prefix(key)
        self._inner = urls.key_prefix(inner)
        # A listing for ``runs`` targets of their own asks for their keys
        # only: a page of 1,000 costs the client (and the store) parsing keys
        # nobody reads. Targets inside runs lie among the runs' own files,
        # however many: their pages stay whole.
        self._page_size = min(1000, len(_KEPT) * runs + 8) if runs and not self._inner else None
        self._pages: Iterator[list[tuple[str, str, int]]] | None = None
        self._page: list[tuple[str, str, int]] = []
        self._at = 0
        self._last = b""
        self._broken = False

    @classmethod
    def open(
        cls,
        base: str,
        storage_options: Mapping[str, Any],
        inner: str = "",
        start: str | None = None,
        runs: int | None = None,
    ) -> TargetIndex | None:
        """The index of ``base`` (an ``s3://`` URL), or ``None`` when it is
        not on S3 or its filesystem cannot be made. ``start``: the first
        run looked up (the listing begins there, not at the prefix's first
        key); ``runs``: how many runs will be looked up from there (pages
        sized for their objects when the targets are of their own; more
        pages when other keys lie between)."""
        if urls.protocol(base) not in ("s3", "s3a"):
            return None
        try:
            from fsspec.core import url_to_fs

            fs, _ = url_to_fs(base, **storage_options)
        except (ImportError, ValueError, TypeError, OSError):
            return None
        return cls(fs, base, inner, start, runs)

    def covers(self, run: str, target: str) -> bool:
        """Whether ``target`` (a URL) is where this index looks for ``run``."""
        return urls.bucket_and_key(target) == (
            self._bucket,
            f"{self._base}{run}/{self._inner}".strip("/"),
        )

    def lookup(self, run: str) -> Standing | None:
        """What stands at ``run``'s target; ``None`` when the store could
        not be listed."""
        if self._broken:
            return None
        prefix = f"{self._base}{run}/{self._inner}"
        order = prefix.encode()
        try:
            if order < self._last:  # out of the listing's order: listed alone
                return self._collect(prefix, self._pages_of(prefix))
            self._last = order
            return self._advance(prefix)
        except Exception:  # noqa: BLE001 - whatever the store raised, ask per run instead
            self._broken = True
            return None

    def _advance(self, prefix: str) -> Standing:
        found: dict[str, tuple[str, int]] = {}
        order = prefix.encode()
        while True:
            if self._at == len(self._page):
                if self._pages is None:
                    after = None if self._start is None else f"{self._base}{self._start}"
                    pages = self._pages_of(self._base, after, self._page_size)
                    # A listing of the whole prefix (the plan's) lists the next
                    # page while this one is looked up: the plan does not stall
                    # a round trip at each page. One from ``start`` serves a
                    # chunk's runs, which a page mostly holds: a page read
                    # ahead would be a request wasted.
                    self._pages = pages if after is not None else read_ahead(pages, 2)
                page = next(self._pages, None)
                if page is None:
                    return Standing(found)
                self._page, self._at = page, 0
                continue
            key, etag, size = self._page[self._at]
            if key.startswith(prefix):
                name = key[len(prefix) :]
                if name in _KEPT:
                    found[name] = (etag, size)
            elif key.encode() > order:
                return Standing(found)
            self._at += 1

    def _collect(self, prefix: str, pages: Iterator[list[tuple[str, str, int]]]) -> Standing:
        found: dict[str, tuple[str, int]] = {}
        for page in pages:
            for key, etag, size in page:
                name = key[len(prefix) :]
                if name in _KEPT:
                    found[name] = (etag, size)
        return Standing(found)

    def _pages_of(
        self, prefix: str, after: str | None = None, page_size: int | None = None
    ) -> Iterator[list[tuple[str, str, int]]]:
        """The keys under ``prefix`` (those after ``after``, when given), a
        page (one request, of ``page_size`` keys at most) at a time."""
        for answer in list_pages(self._fs, self._bucket, prefix, after=after, page_size=page_size):
            yield [
                (str(item["Key"]), str(item["ETag"]).strip('"'), int(item.get("Size") or 0))
                for item in answer.get("Contents", ())
            ]
