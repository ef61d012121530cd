"""JSON values: addressing one inside a document, and comparing two.

- :func:`json_pointer`: the value at an RFC 6901 pointer, or :data:`MISSING`;
- :func:`json_equal`: deep equality as JSON means it: numbers by value
  (``1`` equals ``1.0``), booleans never equal to numbers (``true`` is not
  ``1``, as Python's ``==`` would have it), objects regardless of key order.

Used by the ``state`` reader, the ``checks`` reader and the criteria.
"""

from __future__ import annotations

import math
from typing import Any, Final

from .exceptions import TruerewardError

__all__ = ["MISSING", "InvalidPointer", "json_equal", "json_pointer"]


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: What :func:`json_pointer` answers for a path that leads nowhere.
MISSING: Final = _Missing()


class InvalidPointer(TruerewardError, ValueError):
    """A JSON Pointer that is not one (it does not start with ``/``)."""


def json_pointer(document: Any, pointer: str) -> Any:
    """The value at RFC 6901 ``pointer`` in ``document``, or :data:`MISSING`
    when the path does not exist (an array index must be digits without a
    leading zero). :class:`InvalidPointer` for a malformed pointer."""
    if pointer == "":
        return document
    if not pointer.startswith("/"):
        raise InvalidPointer(f"JSON pointer {pointer!r} must start with '/'")
    current = document
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(current, dict):
            if token not in current:
                return MISSING
            current = current[token]
        elif isinstance(current, list):
            if not token.isdigit() or (len(token) > 1 and token.startswith("0")):
                return MISSING
            index = int(token)
            if index >= len(current):
                return MISSING
            current = current[index]
        else:
            return MISSING
    return current


def json_equal(left: Any, right: Any) -> bool:
    """Deep JSON equality: numbers by value (``1 == 1.0``), booleans never
    equal to numbers, objects regardless of key order."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, int | float) and isinstance(right, int | float):
        return math.isfinite(left) and math.isfinite(right) and left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(map(json_equal, left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    return type(left) is type(right) and left == right
