"""Names that become path segments (run ids and sweep names), and relative
paths that must stay inside a directory (a run's files, named by a request,
a task spec or a reader's options).

A run id or a sweep name is joined into a path or an object key when grades
are published (``<target>/<run id>/grade.json``). It must therefore be one
segment that cannot escape its parent: not empty, not ``.`` or ``..``, no
``/`` or ``\\``, no control characters, no leading or trailing whitespace,
at most 255 characters.
"""

from __future__ import annotations

import re

from . import urls

__all__ = ["check_inner_path", "check_segment"]

_FORBIDDEN = re.compile(r"[/\\\x00-\x1f\x7f-\x9f]")


def check_segment(value: str) -> str:
    """``value`` if it is a safe single path segment, else ``ValueError``
    saying why."""
    if not value:
        raise ValueError("a name used as a path segment must not be empty")
    if value in (".", ".."):
        raise ValueError(f"{value!r} cannot be used as a path segment")
    if len(value) > 255:
        raise ValueError(f"a path segment has at most 255 characters, got {len(value)}")
    if value.strip() != value:
        raise ValueError(f"{value!r} starts or ends with whitespace")
    bad = _FORBIDDEN.search(value)
    if bad:
        raise ValueError(f"{value!r} contains {bad.group()!r}: no separators or control characters")
    return value


def check_inner_path(value: str, inside: str) -> str:
    """``value`` if it is a relative path that stays inside ``inside`` (a
    phrase such as ``"the run"``), else ``ValueError`` saying so: not empty,
    not absolute, not a URL, no ``\\``, no empty or ``..`` part (``.``
    parts are harmless and kept)."""
    # An empty part also stands for an empty path, a leading "/" and "//".
    parts = value.split("/")
    if "\\" in value or urls.is_url(value) or any(part in ("", "..") for part in parts):
        raise ValueError(f"a relative path inside {inside}, got {value!r}")
    return value
