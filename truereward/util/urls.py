"""Locations: local paths and URLs, in one place.

Everywhere the package takes a location it takes a local path, a
``file://`` (or ``local://``) URL, or any other fsspec URL; this module is
the one place that tells them apart (a URL holds ``://``; its scheme,
before the first one, in lower case): :func:`is_url`, :func:`protocol`,
:func:`is_local`, :func:`local_path`, :func:`local_or_none`,
:func:`path_or_url`, :func:`strip_protocol`, :func:`bucket_and_key`,
:func:`join` (with ``/``), :func:`name`, :func:`parent`. docs/design.md,
"One of each".
"""

from __future__ import annotations

__all__ = [
    "bucket_and_key",
    "is_local",
    "is_url",
    "join",
    "key_prefix",
    "local_or_none",
    "local_path",
    "name",
    "parent",
    "path_or_url",
    "protocol",
    "strip_protocol",
]

_SEPARATOR = "://"
_LOCAL = frozenset({"file", "local"})


def is_url(location: str) -> bool:
    """Whether ``location`` is written as a URL (holds ``scheme://``),
    ``file://`` and ``local://`` ones included; a plain path is not."""
    return _SEPARATOR in location


def protocol(location: str) -> str:
    """``file`` for a local location, else the URL's scheme, lower case."""
    scheme, sep, _ = location.partition(_SEPARATOR)
    if not sep:
        return "file"
    scheme = scheme.lower()
    return "file" if scheme in _LOCAL else scheme


def is_local(location: str) -> bool:
    """Whether ``location`` is a local path or a ``file://``/``local://`` URL
    (any case of the scheme)."""
    return protocol(location) == "file"


def strip_protocol(location: str) -> str:
    """``location`` without its ``scheme://`` (as it is when it has none)."""
    _, sep, rest = location.partition(_SEPARATOR)
    return rest if sep else location


def local_path(location: str) -> str:
    """The path of a local ``location``; ``ValueError`` for any other URL."""
    if not is_local(location):
        raise ValueError(f"{location!r} is not a local path")
    return strip_protocol(location)


def local_or_none(location: str) -> str | None:
    """The path of a local ``location``; ``None`` for any other URL."""
    return strip_protocol(location) if is_local(location) else None


def path_or_url(location: str) -> str:
    """The path of a local ``location``; any other URL as it is (what the
    standard library, or fsspec, opens)."""
    return strip_protocol(location) if is_local(location) else location


def bucket_and_key(url: str) -> tuple[str, str]:
    """The bucket and the key (or key prefix) of an object store URL
    (``s3://bucket/a/b/`` is ``("bucket", "a/b")``): the part after the
    protocol, without leading and trailing ``/``, split at its first ``/``.
    Either may be empty (``s3://`` has neither); a location without a
    protocol is split the same way."""
    bucket, _, key = strip_protocol(url).strip("/").partition("/")
    return bucket, key


def key_prefix(key: str) -> str:
    """``key`` as a listing prefix: without surrounding ``/`` and ending in
    one (``a/b`` is ``a/b/``); ``""`` for a bucket's root."""
    key = key.strip("/")
    return f"{key}/" if key else ""


def join(location: str, *parts: str) -> str:
    """``location/part/...``, the location's trailing ``/`` dropped: an
    empty location joins the parts alone, a root (``/``, ``memory://``)
    keeps its own ``/`` (``/a``, ``memory://a``); no parts: the location
    without its trailing ``/``. Parts are taken as they are."""
    scheme, sep, rest = location.partition(_SEPARATOR)
    if sep:
        return f"{scheme}{sep}{join(rest, *parts)}"
    if location and not location.strip("/"):
        return "/" + "/".join(parts)
    return "/".join([location.rstrip("/"), *parts]) if location else "/".join(parts)


def name(location: str) -> str:
    """The last part of ``location``'s path, trailing ``/`` ignored
    (``s3://bucket/sweep/run-7/`` is ``run-7``, ``s3://bucket`` is
    ``bucket``); empty for an empty location or a root."""
    return strip_protocol(location).rstrip("/").rsplit("/", 1)[-1]


def parent(location: str) -> str:
    """``location`` without the last part of its path (trailing ``/``
    ignored): ``s3://bucket/sweep/run-7/`` is ``s3://bucket/sweep``; a
    root keeps its ``/``, as in :func:`join` (``/a`` and ``/`` give ``/``,
    ``file:///a`` gives ``file:///``); a single relative part gives ``""``."""
    scheme, sep, rest = location.partition(_SEPARATOR)
    head = rest if sep else location
    trimmed = head.rstrip("/")
    cut = trimmed.rsplit("/", 1)[0] if "/" in trimmed else ""
    if not cut and head.startswith("/"):
        cut = "/"
    return f"{scheme}{sep}{cut}" if sep else cut
