"""Comparing a value a criterion found with the value the task expects.

The task's ``expected`` is JSON; what is found comes from a JSON file, a
SQLite row or a spreadsheet cell:

- :func:`json_value_equal`: JSON against JSON, as :func:`truereward.jsonvalues.json_equal`
  (``1`` equals ``1.0``; ``true`` never equals ``1``);
- :func:`sqlite_value_equal`: SQLite has no booleans (it stores ``true`` as
  1), so an expected ``true``/``false`` means 1/0; numbers by value; text
  exactly; ``null`` is ``NULL``; a BLOB equals nothing;
- :func:`cell_value_equal`: a spreadsheet cell (``bool``, number, text,
  empty, or a date and time) as JSON, a date or time cell equal to the
  string of its ISO 8601 form (``2026-01-31T00:00:00``).

:func:`shown` cuts a value for a message.
"""

from __future__ import annotations

import datetime
from typing import Any

from ..jsonvalues import json_equal

__all__ = ["cell_value_equal", "json_value_equal", "shown", "sqlite_value_equal"]


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
