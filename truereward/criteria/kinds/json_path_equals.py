"""``json_path_equals``: the value at a path inside the JSON in ``path`` is
``expected``.

Options: ``path``, ``expected`` (any JSON value), and exactly one of
``json_path`` (rewardkit's dotted path: ``a.b.0.c``, each segment a key of an
object or an index of an array, ``-1`` the last item) or ``pointer`` (an RFC
6901 JSON Pointer, ``/a/b/0/c``, for keys holding a dot). Read and compared
as for ``json_key_equals``; a path that leads nowhere fails the case.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import JsonValue, model_validator

from ...util.jsonvalues import MISSING, json_pointer
from ..context import Context
from ..kind import CriterionKind, Failure, Options, Outcome
from ..options import Path
from ..values import compared, shown

_INDEX = re.compile(r"-?[0-9]+")


class JsonPathEquals(Options):
    path: Path
    expected: JsonValue
    json_path: str | None = None
    pointer: str | None = None

    @model_validator(mode="after")
    def _one_path(self) -> JsonPathEquals:
        if (self.json_path is None) == (self.pointer is None):
            raise ValueError("give exactly one of json_path (a.b.0) and pointer (/a/b/0)")
        if self.pointer is not None and self.pointer and not self.pointer.startswith("/"):
            raise ValueError(f"pointer {self.pointer!r} must start with '/'")
        return self


def dotted(document: Any, path: str) -> Any:
    """The value at rewardkit's dotted ``path``, or :data:`MISSING`."""
    current = document
    for segment in path.split("."):
        if isinstance(current, dict):
            if segment not in current:
                return MISSING
            current = current[segment]
        elif isinstance(current, list):
            if not _INDEX.fullmatch(segment):
                return MISSING
            index = int(segment)
            if not -len(current) <= index < len(current):
                return MISSING
            current = current[index]
        else:
            return MISSING
    return current


def evaluate(options: JsonPathEquals, context: Context) -> Outcome:
    files = context.workspace()
    where = files.shown(options.path)
    document = files.json(options.path)
    address = options.pointer if options.json_path is None else options.json_path
    assert address is not None
    if options.json_path is not None:
        found = dotted(document, address)
    else:
        found = json_pointer(document, address)  # the model checked it starts with "/"
    if found is MISSING:
        raise Failure(f"{where} has nothing at {shown(address)}")
    return compared(found, options.expected, f"{where} at {shown(address)}")


CRITERION = CriterionKind(
    name="json_path_equals",
    description="a value inside a JSON file (dotted path or JSON Pointer) is the expected one",
    options=JsonPathEquals,
    evaluate=evaluate,
)
