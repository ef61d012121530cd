"""Paths into a JSON value for ``json_field``: ``user.name``,
``items.0.id``, ``items[0].id``, ``matrix[1][2]``.

A path is split on dots; empty segments are skipped (``a..b`` is ``a.b``, a
leading dot is ignored, and an empty path is the whole value), as in
ai-eval-forge. A segment steps into the current value:

- an object: the member named by the whole segment, when there is one (so a
  key that itself contains brackets, ``"b[0]"``, is still found, as in
  ai-eval-forge);
- otherwise a segment ``name[i][j]...`` steps into ``name`` (when not empty)
  and then into each index ``i`` (an integer, negative counts from the end);
  an index into an object looks up the member named by its digits;
- otherwise, into an array: the segment read as an integer (Python's
  ``int()``, negative counts from the end, as in ai-eval-forge).

Anything else (a member or index that is not there, a step into a string, a
number, ``true``/``false``/``null``) means the path is *missing*:
:data:`MISSING`, never ``None``. ai-eval-forge returns ``None`` for a missing
path, so that a missing field equals ``"value": null``; here it does not.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["MISSING", "lookup", "segments"]

_INDEXED = re.compile(r"(?P<name>[^\[\]]*)(?P<indexes>(?:\[-?[0-9]+\])+)")
_INDEX = re.compile(r"\[(-?[0-9]+)\]")


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


#: The value of a path that leads nowhere.
MISSING: Any = _Missing()


def segments(path: str) -> list[str]:
    """The non-empty dot-separated segments of ``path``."""
    return [segment for segment in path.split(".") if segment]


def _member(current: Any, key: str) -> Any:
    if isinstance(current, dict):
        return current.get(key, MISSING)
    if isinstance(current, list):
        try:
            return current[int(key)]
        except (ValueError, IndexError):
            return MISSING
    return MISSING


def _index(current: Any, digits: str) -> Any:
    if isinstance(current, dict):
        return current.get(digits, MISSING)
    if isinstance(current, list):
        try:
            index = int(digits)
        except ValueError:  # more digits than int() reads
            return MISSING
        if -len(current) <= index < len(current):
            return current[index]
    return MISSING


def _step(current: Any, segment: str) -> Any:
    if isinstance(current, dict) and segment in current:
        return current[segment]
    indexed = _INDEXED.fullmatch(segment)
    if indexed is None:
        return _member(current, segment)
    name = indexed.group("name")
    if name:
        current = _member(current, name)
    for digits in _INDEX.findall(indexed.group("indexes")):
        if current is MISSING:
            break
        current = _index(current, digits)
    return current


def lookup(value: Any, path: str) -> Any:
    """The value at ``path`` in ``value``, or :data:`MISSING`."""
    current = value
    for segment in segments(path):
        current = _step(current, segment)
        if current is MISSING:
            return MISSING
    return current
