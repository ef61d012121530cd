"""``exact``: the output equals the target, as normalised text.

Target: the check's ``value`` (any JSON value, as text: see
:func:`~truereward.checks.text.stringify`), else the case's ``expected``.
Both sides are folded (NFKC, case folding) and their whitespace runs
collapsed (:func:`~truereward.checks.text.normalize`); score 1 when equal,
else 0. ai-eval-forge only lower-cases, so ``"Straße"`` / ``"STRASSE"`` and
full-width / ASCII letters differ there; on ASCII text the two agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..context import CaseContext
from ..model import Measurement
from ..registry import CheckType, Warn
from ..text import normalize, stringify

_EQUAL = Measurement(1.0, (1, 1), "")
_DIFFERENT = Measurement(0.0, (0, 1), "normalised texts differ")


def parse(check: Mapping[str, Any], case: Mapping[str, Any], warn: Warn) -> dict[str, Any]:
    if "value" in check:
        return {"value": stringify(check["value"])}
    return {}


def measure(params: Mapping[str, Any], context: CaseContext) -> Measurement:
    target = params.get("value", context.expected)
    return _EQUAL if normalize(context.actual) == normalize(target) else _DIFFERENT


CHECK = CheckType(
    name="exact",
    description="normalised text equality (NFKC, case folding, whitespace collapsed)",
    parse=parse,
    measure=measure,
)
