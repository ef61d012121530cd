"""The S3 store: conditional single-request writes through s3fs.

Every write is one ``PutObject`` of an in-memory body through s3fs's
client (``If-None-Match: *`` to create, ``If-Match: <etag>`` to replace;
``If-Match`` on ``DeleteObject``); a refused precondition (412, or 409
under contention) is ``PreconditionFailed``, any other failure a
``PublishError`` naming the object. s3fs drops parameters an old botocore
does not know, so opening a store refuses a botocore below
:data:`BOTOCORE_FLOOR` (:func:`unconditional_operations`). docs/scale.md,
"Conditional writes", and docs/design.md, "The publishing protocol".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import metadata
from typing import Any, TypeVar

from ..grade.files import NAMES
from ..util import urls
from .errors import BadStorageOptions, PublishError
from .objects import PreconditionFailed

__all__ = ["BOTOCORE_FLOOR", "CONDITIONS", "S3Store", "unconditional_operations"]

T = TypeVar("T")

_CONTENT_TYPES = {".json": "application/json", ".txt": "text/plain; charset=utf-8"}
#: The metadata key naming an object's grade (``x-amz-meta-truereward-grade``).
GRADE_KEY = "truereward-grade"
_PRECONDITION_CODES = {"PreconditionFailed", "ConditionalRequestConflict", "412", "409"}
#: A listing of our names starts after ``_FIRST`` (just below the first of
#: them) and may stop at the last, ``_LAST``.
_FIRST, _LAST = min(NAMES)[:-1], max(NAMES)
#: The request parameters the store's writes depend on, by S3 operation.
CONDITIONS = (("PutObject", "IfNoneMatch"), ("PutObject", "IfMatch"), ("DeleteObject", "IfMatch"))
#: The first botocore whose S3 model has every one of :data:`CONDITIONS`
#: (IfNoneMatch came in 1.35.2, IfMatch on DeleteObject in 1.35.67); the s3
#: extra asks for at least this.
BOTOCORE_FLOOR = "1.35.69"


def unconditional_operations(service_model: Any) -> list[str]:
    """The ``Operation.Parameter`` pairs of :data:`CONDITIONS` that a
    botocore S3 service model lacks (an operation it does not have lacks
    its parameters): what s3fs would drop from our requests. Empty when
    every conditional write can be sent."""
    from botocore.model import OperationNotFoundError

    missing = []
    for operation, parameter in CONDITIONS:
        try:
            shape = service_model.operation_model(operation).input_shape
        except OperationNotFoundError:
            shape = None
        if shape is None or parameter not in shape.members:
            missing.append(f"{operation}.{parameter}")
    return missing


def _installed(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "(not installed)"


def _error_code(error: BaseException) -> str | None:
    """The S3 error code behind an error s3fs raised (it keeps the botocore
    error as ``__cause__``)."""
    seen: BaseException | None = error
    while seen is not None:
        response = getattr(seen, "response", None)
        if isinstance(response, dict):
            code = response.get("Error", {}).get("Code")
            return None if code is None else str(code)
        seen = seen.__cause__
    return None


class S3Store:
    """The objects of one grade under ``s3://bucket/prefix``."""

    has_metadata = True

    def __init__(self, url: str, options: dict[str, Any]) -> None:
        import s3fs

        self.bucket, prefix = urls.bucket_and_key(url)
        if not self.bucket:
            raise PublishError(f"{url}: an S3 target needs a bucket")
        self.prefix = urls.key_prefix(prefix)
        self.location = urls.join(f"s3://{self.bucket}/{prefix}")
        try:
            self.fs = s3fs.S3FileSystem(**options)
            # s3fs builds its client at the first request; building it now (no
            # request is sent) turns an option it does not take into an error
            # about the options instead of a failed write.
            self.fs.connect()
        except TypeError as error:
            raise BadStorageOptions(f"{url}: storage options: {error}") from None
        missing = unconditional_operations(self.fs.s3.meta.service_model)
        if missing:
            raise PublishError(
                f"{self.location}: the installed botocore {_installed('botocore')} "
                f"(aiobotocore {_installed('aiobotocore')}, s3fs {_installed('s3fs')}) "
                f"cannot send {', '.join(missing)}, and s3fs would drop them, so "
                "publishing would race instead of writing conditionally; it needs "
                f"botocore>={BOTOCORE_FLOOR} (pip install -U 'truereward[s3]')"
            )

    def _no_bucket(self, error: FileNotFoundError) -> None:
        """Raise a PublishError when ``error`` says the bucket is missing (s3fs
        maps NoSuchBucket and NoSuchKey to the same FileNotFoundError)."""
        if _error_code(error) == "NoSuchBucket":
            raise PublishError(f"{self.location}: bucket {self.bucket!r} does not exist") from None

    def _call(self, name: str, method: str, **kwargs: Any) -> Any:
        try:
            return self.fs.call_s3(method, Bucket=self.bucket, Key=self.prefix + name, **kwargs)
        except FileExistsError:
            raise PreconditionFailed(name) from None
        except FileNotFoundError as error:
            self._no_bucket(error)
            raise
        except Exception as error:
            if _error_code(error) in _PRECONDITION_CODES:
                raise PreconditionFailed(name) from None
            raise PublishError(f"{self.location}/{name}: {method} failed: {error}") from error

    def _guard(self, what: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except FileNotFoundError as error:
            self._no_bucket(error)
            raise
        except (PreconditionFailed, PublishError):
            raise
        except Exception as error:
            raise PublishError(f"{self.location}: {what} failed: {error}") from error

    def etags(self) -> dict[str, str]:
        """One listing request, in the usual case. It starts just before the
        first of our names and ends past the last: the run's other objects at
        the prefix (a run graded in place keeps its evidence there) cost
        another page only when more than a page of them sort between our
        names, and a name on a later page is never missed."""
        first, last = self.prefix + _FIRST, self.prefix + _LAST

        def listing() -> dict[str, str]:
            found = {}
            query: dict[str, Any] = {"Prefix": self.prefix, "Delimiter": "/", "StartAfter": first}
            while True:
                response = self.fs.call_s3("list_objects_v2", Bucket=self.bucket, **query)
                keys = [str(item["Key"]) for item in response.get("Contents", [])]
                for item in response.get("Contents", []):
                    name = item["Key"][len(self.prefix) :]
                    if name in NAMES:
                        found[name] = str(item["ETag"]).strip('"')
                keys += [str(item["Prefix"]) for item in response.get("CommonPrefixes", [])]
                token = response.get("NextContinuationToken")
                if not response.get("IsTruncated") or not token or max(keys, default=last) >= last:
                    return found
                query = {"Prefix": self.prefix, "Delimiter": "/", "ContinuationToken": token}

        return self._guard("listing", listing)

    def _head(self, name: str) -> dict[str, Any] | None:
        """The object's HEAD answer; ``None`` when there is no such object."""
        try:
            head: dict[str, Any] = self._guard(
                f"looking at {name}",
                lambda: self.fs.call_s3("head_object", Bucket=self.bucket, Key=self.prefix + name),
            )
        except FileNotFoundError:
            return None
        return head

    def etag(self, name: str) -> str | None:
        head = self._head(name)
        return None if head is None else str(head["ETag"]).strip('"')

    def read(self, name: str) -> bytes | None:
        """One GET (:func:`truereward.util.fetch.fetch`); an object larger than
        any grade is not read, and compares as different from any body of
        ours."""
        from ..util import safefile
        from ..util.fetch import fetch

        try:
            _, data = self._guard(
                f"reading {name}",
                lambda: fetch(self.fs, f"{self.bucket}/{self.prefix}{name}", safefile.LIMIT),
            )
        except FileNotFoundError:
            return None
        return b"\0" if data is None else data

    @staticmethod
    def _put_arguments(data: bytes, name: str, grade: str | None) -> dict[str, Any]:
        """What a PutObject of ``name`` sends besides its key."""
        suffix = name[name.rfind(".") :]
        extra: dict[str, Any] = {"Metadata": {GRADE_KEY: grade}} if grade else {}
        return {
            "Body": data,
            "ContentType": _CONTENT_TYPES.get(suffix, "application/octet-stream"),
            **extra,
        }

    def _put(self, name: str, data: bytes, grade: str | None = None, **conditions: str) -> None:
        try:
            self._call(name, "put_object", **self._put_arguments(data, name, grade), **conditions)
        except FileNotFoundError as error:  # If-Match on a key that is gone
            if conditions:
                raise PreconditionFailed(name) from None
            raise PublishError(f"{self.location}/{name}: put failed: {error}") from error

    def create(self, name: str, data: bytes) -> None:
        self._put(name, data, IfNoneMatch="*")

    def replace(self, name: str, data: bytes, etag: str) -> None:
        self._put(name, data, IfMatch=f'"{etag}"')

    def put(self, name: str, data: bytes, grade: str | None = None) -> None:
        self._put(name, data, grade)

    def put_all(self, bodies: Mapping[str, bytes], grade: str | None = None) -> None:
        """Unconditional PUTs of ``bodies``, in flight at once (each its own
        request); the first failure, as :meth:`put` would raise it, once
        every request has been answered."""
        import asyncio

        from fsspec.asyn import sync

        async def one(name: str, data: bytes) -> None:
            await self.fs._call_s3(
                "put_object",
                Bucket=self.bucket,
                Key=self.prefix + name,
                **self._put_arguments(data, name, grade),
            )

        async def every() -> list[BaseException | None]:
            calls = (one(name, data) for name, data in bodies.items())
            return await asyncio.gather(*calls, return_exceptions=True)

        for name, outcome in zip(bodies, sync(self.fs.loop, every), strict=True):
            if isinstance(outcome, FileNotFoundError):
                self._no_bucket(outcome)
            if isinstance(outcome, BaseException):
                raise PublishError(
                    f"{self.location}/{name}: put_object failed: {outcome}"
                ) from outcome

    def grade_of(self, name: str) -> str | None:
        head = self._head(name)
        if head is None:
            return None
        found = (head.get("Metadata") or {}).get(GRADE_KEY)
        return str(found) if found else None

    def delete(self, name: str, etag: str) -> None:
        try:
            self._call(name, "delete_object", IfMatch=f'"{etag}"')
        except FileNotFoundError:
            return  # already gone (a retried request of ours, or another cleaner)
