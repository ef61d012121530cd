"""Locations: local paths and URLs, in one place.

Everywhere the package takes a location (evidence, a sweep, a target, a
report) it takes a local path, a ``file://`` (or fsspec's ``local://``) URL,
or any other fsspec URL (``s3://bucket/prefix``, ``memory://...``). This
module is the one place that tells them apart and strips a protocol:

- :func:`protocol`: ``file`` for a local path or ``file://``/``local://``
  URL, else the URL's scheme in lower case;
- :func:`is_local`; :func:`local_path`: the path of a local location
  (``ValueError`` for a URL);
- :func:`join`: a location and relative parts, with ``/`` (local paths on
  POSIX too).
"""

from __future__ import annotations

__all__ = ["is_local", "join", "local_path", "protocol", "strip_protocol"]

_SEPARATOR = "://"
_LOCAL = frozenset({"file", "local"})


def protocol(location: str) -> str:
    """``file`` for a local location, else the URL's scheme, lower case."""
    scheme, sep, _ = location.partition(_SEPARATOR)
    if not sep:
        return "file"
    scheme = scheme.lower()
    return "file" if scheme in _LOCAL else scheme


def is_local(location: str) -> bool:
    """Whether ``location`` is a local path (or a ``file://`` URL)."""
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


def join(location: str, *parts: str) -> str:
    """``location/part/...``; an empty location joins the parts alone."""
    base = location.rstrip("/") or location
    return "/".join([base, *parts]) if base else "/".join(parts)
