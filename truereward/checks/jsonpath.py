"""Paths into a JSON value for ``json_field``: ``user.name``,
``items.0.id``, ``items[0].id``, ``matrix[1][2]``.

A path is split on dots, empty segments skipped (an empty path is the whole
value), as in ai-eval-forge. A segment steps into an object's member of that
whole name when there is one (``"b[0]"`` is found), else ``name[i][j]...``
steps into ``name`` then each index (negative from the end; into an object,
the member named by the digits), else into an array by ``int()``. Anything
else is :data:`MISSING`, never ``None``, so a missing field does not equal
``"value": null`` (it does in ai-eval-forge). docs/checks.md.
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
