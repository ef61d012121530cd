"""Comparing a value a criterion found with the value the task expects.

The expected value is JSON. :func:`json_value_equal` compares JSON with
JSON (``1`` equals ``1.0``, ``true`` never ``1``); :func:`sqlite_value_equal`
a SQLite value (``true``/``false`` mean 1/0, numbers by value, text
exactly, ``null`` is ``NULL``, a BLOB equals nothing);
:func:`cell_value_equal` a spreadsheet cell (a date or time equals its ISO
8601 text). :func:`shown` cuts a value for a message; :func:`compared` is
the outcome of one comparison. docs/criteria.md.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

from ..util.jsonvalues import json_equal
from .kind import Outcome

__all__ = ["cell_value_equal", "compared", "json_value_equal", "shown", "sqlite_value_equal"]


def json_value_equal(found: Any, expected: Any) -> bool:
    """JSON equality (module docstring)."""
    return json_equal(found, expected)


def sqlite_value_equal(found: Any, expected: Any) -> bool:
    """A SQLite value against a JSON one (module docstring)."""
    if isinstance(expected, bool):
        expected = int(expected)
    if isinstance(found, bytes | bytearray | memoryview):
        return False
    return json_equal(found, expected)


def cell_value_equal(found: Any, expected: Any) -> bool:
    """A spreadsheet cell against a JSON value (module docstring)."""
    if isinstance(found, datetime.datetime | datetime.date | datetime.time | datetime.timedelta):
        text = str(found) if isinstance(found, datetime.timedelta) else found.isoformat()
        return isinstance(expected, str) and text == expected
    return json_equal(found, expected)


def shown(value: Any, limit: int = 200) -> str:
    """``repr(value)``, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def compared(
    found: Any, expected: Any, what: str, equal: Callable[[Any, Any], bool] = json_value_equal
) -> Outcome:
    """Pass when ``equal(found, expected)``, else "<what> is <found>, expected <expected>"."""
    return Outcome.binary(
        equal(found, expected), f"{what} is {shown(found)}, expected {shown(expected)}"
    )
