"""``json_valid``: the output is JSON.

JSON as RFC 8259 and every JavaScript runtime define it: ``NaN``,
``Infinity`` and ``-Infinity`` are not JSON (ai-eval-forge accepts them,
because Python's ``json`` module does). Leading and trailing whitespace is
allowed; a repeated key is allowed (the last one counts). Score 1 or 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..context import NOT_JSON, CaseContext
from ..model import Measurement
from ..registry import CheckType, Warn

_VALID = Measurement(1.0, (1, 1), "")


def parse(check: Mapping[str, Any], case: Mapping[str, Any], warn: Warn) -> dict[str, Any]:
    return {}


def measure(params: Mapping[str, Any], context: CaseContext) -> Measurement:
    if context.output_json() is NOT_JSON:
        return Measurement(0.0, (0, 1), f"output is {context.output_json_error()}")
    return _VALID


CHECK = CheckType(
    name="json_valid",
    description="the output parses as JSON (RFC 8259)",
    parse=parse,
    measure=measure,
)
