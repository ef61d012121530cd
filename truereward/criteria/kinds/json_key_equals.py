"""``json_key_equals``: the JSON object in ``path`` has ``key`` equal to
``expected``.

Options: ``path``, ``key``, ``expected`` (any JSON value). The file is read
as strict JSON (no NaN, no duplicate keys); values compare as JSON
(``1`` equals ``1.0``, ``true`` never equals ``1``). Absent, not JSON, not an
object at the top, or the key absent: the case fails.
"""

from __future__ import annotations

from pydantic import JsonValue

from ..context import Context
from ..kind import CriterionKind, Failure, Options, Outcome
from ..options import Path
from ..values import compared, shown


class JsonKeyEquals(Options):
    path: Path
    key: str
    expected: JsonValue


def evaluate(options: JsonKeyEquals, context: Context) -> Outcome:
    files = context.workspace()
    where = files.shown(options.path)
    document = files.json(options.path)
    if not isinstance(document, dict):
        raise Failure(f"{where} does not hold a JSON object")
    if options.key not in document:
        raise Failure(f"{where} has no key {shown(options.key)}")
    return compared(document[options.key], options.expected, f"{where}: {options.key}")


CRITERION = CriterionKind(
    name="json_key_equals",
    description="a top-level key of a JSON file has the expected value",
    options=JsonKeyEquals,
    evaluate=evaluate,
)
