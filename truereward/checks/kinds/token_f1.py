"""``token_f1``: F1 between the output's tokens and the target's.

Target: the check's ``value`` (as text), else the case's ``expected``.
Tokens are folded runs of letters, digits and marks
(:func:`~truereward.checks.text.tokens`). With ``o`` tokens in common
(counted with multiplicity), ``A`` tokens in the output and ``E`` in the
target: precision ``o/A``, recall ``o/E``, F1 ``2·p·r / (p + r)``, which is
exactly ``2o / (A + E)``. Both empty: 1. One empty, or nothing in common: 0.
This is the case's default check (``min`` 0.65) when it names none.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..context import CaseContext
from ..model import Measurement
from ..numbers import round4
from ..registry import CheckType, Warn
from ..text import stringify, tokens


def overlap(left: list[str], right: list[str]) -> int:
    """Tokens the two lists share, with multiplicity (sum of the smaller
    count of each token)."""
    counts: dict[str, int] = {}
    for token in right:
        counts[token] = counts.get(token, 0) + 1
    shared = 0
    for token in left:
        left_over = counts.get(token, 0)
        if left_over:
            shared += 1
            counts[token] = left_over - 1
    return shared


def f1(actual: str, target: str) -> Measurement:
    """The token F1 of two texts (see the module docstring)."""
    got = tokens(actual)
    want = tokens(target)
    if not got and not want:
        return Measurement(1.0, (1, 1), "token_f1=1.0")
    if not got or not want:
        return Measurement(0.0, (0, 1), "token_f1=0.0")
    shared = overlap(got, want)
    if shared == 0:
        return Measurement(0.0, (0, 1), "token_f1=0.0")
    # The float the way ai-eval-forge computes it (it is what gets reported);
    # the exact ratio decides the threshold.
    precision = shared / len(got)
    recall = shared / len(want)
    value = (2 * precision * recall) / (precision + recall)
    return Measurement(value, (2 * shared, len(got) + len(want)), f"token_f1={round4(value)}")


def parse(check: Mapping[str, Any], case: Mapping[str, Any], warn: Warn) -> dict[str, Any]:
    if "value" in check:
        return {"value": stringify(check["value"])}
    return {}


def measure(params: Mapping[str, Any], context: CaseContext) -> Measurement:
    return f1(context.actual, params.get("value", context.expected))


CHECK = CheckType(
    name="token_f1",
    description="F1 over folded Unicode word tokens",
    parse=parse,
    measure=measure,
)
