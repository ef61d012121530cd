"""Turning a pydantic ``ValidationError`` into one sentence that names the
field.

:func:`describe` is the one place the package words validation errors (the
command line, the flow, readers, stored documents): ``field.path: message``
per error, the first ``limit`` of them, then ``and N more``; pydantic's
``Value error,`` prefix dropped, a model validator's message that starts
with a field path said under that field, a bad case id said in words.
Callers put their own ``where`` (a file, a line, a row) before it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = ["describe"]

#: A field path at the start of a validator's message (``code``, ``runs.2``).
_FIELD = re.compile(r"[a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*")


def describe(
    error: ValidationError, *, limit: int = 5, whole: str = "(input)", depth: int | None = None
) -> str:
    """The errors of ``error`` as ``field.path: message`` parts joined by
    ``; ``: the first ``limit`` (at least one), then ``and N more`` when
    some were left out. ``whole`` names the input itself when an error has
    no field; ``depth``, when given, keeps only the first ``depth`` parts of
    each field path (``1``: the top-level field, without the union member
    pydantic adds, ``id.str``)."""
    from .cases import CASE_ID_PATTERN, CASE_ID_RULE

    found = error.errors()
    limit = max(limit, 1)
    parts = []
    for item in found[:limit]:
        loc = item["loc"] if depth is None else item["loc"][:depth]
        where = ".".join(str(part) for part in loc) or whole
        message = str(item["msg"]).removeprefix("Value error, ")
        if (
            item["type"] == "string_pattern_mismatch"
            and (item.get("ctx") or {}).get("pattern") == CASE_ID_PATTERN
        ):
            given = repr(item["input"])
            message = f"{CASE_ID_RULE}, got {given if len(given) <= 200 else given[:200] + '...'}"
        # A model validator names the field at the start of its message.
        field, sep, rest = message.partition(": ")
        if sep and _FIELD.fullmatch(field):
            where, message = (field if where == whole else f"{where}.{field}"), rest
        parts.append(f"{where}: {message}")
    if len(found) > limit:
        parts.append(f"and {len(found) - limit} more")
    return "; ".join(parts)
