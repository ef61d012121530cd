"""One object of an fsspec store, in one request.

fsspec's generic ``cat_file`` and ``open`` first ask the store for the
object's size (on S3 a ``HEAD``, and a ``LIST`` when that finds nothing),
then read it: two or three round trips where one serves. On S3 (s3fs),
:func:`fetch` and :func:`opened` send one ``GET`` and learn the size from
its answer, before any of the body is read; on any other filesystem they
fall back to the generic calls. A missing object raises
``FileNotFoundError``, whatever the store; a directory ``IsADirectoryError``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

__all__ = ["fetch", "is_s3", "opened", "prefetch"]


def is_s3(fs: Any) -> bool:
    """Whether ``fs`` is s3fs's: :func:`prefetch` sends ahead only there."""
    return hasattr(fs, "_call_s3") and "s3" in getattr(fs, "protocol", ())


@contextmanager
def opened(fs: Any, path: str) -> Iterator[tuple[int, Callable[[int], bytes]]]:
    """The object at ``path`` (as ``fs`` names it): its size, and a function
    reading its next ``n`` bytes (``b""`` at the end). On S3 one ``GET``
    whose body is read as asked, so memory holds what the caller holds."""
    if not is_s3(fs):
        info = fs.info(path)
        if info.get("type") == "directory":
            raise IsADirectoryError(path)
        with fs.open(path, "rb") as handle:
            yield int(info.get("size") or 0), lambda count: bytes(handle.read(count))
        return
    from fsspec.asyn import sync

    bucket, key, version = fs.split_path(path)
    if not key or key.endswith("/"):
        raise IsADirectoryError(path)
    extra = {"VersionId": version} if version else {}
    answer = fs.call_s3("get_object", Bucket=bucket, Key=key, **extra)
    body = answer["Body"]
    try:
        yield int(answer.get("ContentLength") or 0), lambda count: sync(fs.loop, body.read, count)
    finally:
        # Unread bytes are dropped with the connection, never read.
        sync(fs.loop, body.__aexit__, None, None, None)


def fetch(fs: Any, path: str, limit: int) -> tuple[int, bytes | None]:
    """The object's size and its bytes, or ``None`` for the bytes when the
    size is over ``limit`` (nothing of it is read then)."""
    with opened(fs, path) as (size, read):
        if size > limit:
            return size, None
        parts = []
        got = 0
        while part := read(min(1 << 20, limit + 1 - got)):
            parts.append(part)
            got += len(part)
            if got > limit:  # it said less than it sent
                return got, None
        return got, b"".join(parts)


def prefetch(fs: Any, path: str, limit: int) -> Future[tuple[int, bytes | None]] | None:
    """:func:`fetch` of ``path`` started on the store's event loop (S3
    only: ``None`` for any other filesystem), its answer in the future it
    returns. Nothing waits for it: a caller that does not need it after all
    lets it finish on its own."""
    if not is_s3(fs):
        return None
    import asyncio

    bucket, key, version = fs.split_path(path)
    extra = {"VersionId": version} if version else {}

    async def get() -> tuple[int, bytes | None]:
        answer = await fs._call_s3("get_object", Bucket=bucket, Key=key, **extra)
        async with answer["Body"] as body:
            size = int(answer.get("ContentLength") or 0)
            if size > limit:
                return size, None
            data: bytes = await body.read()
        return (len(data), None) if len(data) > limit else (len(data), data)

    return asyncio.run_coroutine_threadsafe(get(), fs.loop)
