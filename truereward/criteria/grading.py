"""One declared case, graded as a criterion: its options in, its row out.

:func:`grade_case` reads ``options["criterion"]``, validates the rest with
the kind's options model and evaluates it: an outcome is ``pass`` or
``fail`` with its score in ``measures["score"]``; a failure is ``fail``,
score 0.0; :class:`~truereward.codes.Ungradable` is its code; a missing,
unknown or unreadable criterion or refused options are ``CASE_INVALID``; a
kind that crashes or scores outside [0, 1] is ``CASE_NOT_GRADED``, never
clipped. ``duration_s`` is the time it took. docs/criteria.md.
"""

from __future__ import annotations

import math
import time
from typing import Any

from pydantic import ValidationError

from ..codes import Ungradable
from ..record.cases import CaseResult
from ..record.taskspec import CaseSpec
from ..record.validation import describe
from ..util.exceptions import UnknownName
from .context import Context
from .kind import Failure, Needs, Outcome
from .registry import get_criterion

__all__ = ["MAX_WHY", "grade_case"]

#: The longest why kept in a row, in characters.
MAX_WHY = 1000


def _row(case: CaseSpec, started: float, **fields: Any) -> CaseResult:
    why = str(fields.pop("why", ""))
    if len(why) > MAX_WHY:
        why = why[: MAX_WHY - 3] + "..."
    return CaseResult(
        id=case.id,
        kind=case.kind,
        why=why,
        duration_s=max(time.monotonic() - started, 0.0),
        **fields,
    )


def grade_case(case: CaseSpec, context: Context, *, reads: frozenset[Needs]) -> CaseResult:
    """The row of ``case`` (module docstring); ``reads`` is what the reader
    can give criteria (``workspace``, ``trajectory``)."""
    started = time.monotonic()

    def refused(code: str, why: str) -> CaseResult:
        return _row(case, started, verdict="ungradable", code=code, why=why)

    options = dict(case.options)
    name = options.pop("criterion", None)
    if not isinstance(name, str):
        return refused(
            "CASE_INVALID",
            "options.criterion: the criterion's kind, such as file_exists or command_succeeds",
        )
    try:
        kind = get_criterion(name)
    except UnknownName as error:
        return refused("CASE_INVALID", f"options.criterion: {error}")
    if kind.needs not in reads:
        return refused(
            "CASE_INVALID",
            f"criterion {name} reads a {kind.needs}: grade it with the {kind.needs} reader",
        )
    try:
        parsed = kind.options.model_validate(options)
    except ValidationError as error:
        return refused("CASE_INVALID", f"criterion {name}: {describe(error, whole='options')}")
    try:
        outcome = kind.evaluate(parsed, context)
    except Failure as failure:
        return _row(case, started, verdict="fail", why=str(failure), measures={"score": 0.0})
    except Ungradable as refusal:
        return refused(refusal.code, f"criterion {name}: {refusal.why}")
    except Exception as error:  # noqa: BLE001 - a kind's bug is the grader's, this case's alone
        return refused(
            "CASE_NOT_GRADED", f"criterion {name} crashed: {type(error).__name__}: {error}"
        )
    if not isinstance(outcome, Outcome):
        return refused(
            "CASE_NOT_GRADED",
            f"criterion {name} answered with {type(outcome).__name__}, not an Outcome",
        )
    score = outcome.score
    if (
        isinstance(score, bool)
        or not isinstance(score, int | float)
        or not math.isfinite(score)
        or not 0.0 <= score <= 1.0
    ):
        return refused(
            "CASE_NOT_GRADED",
            f"criterion {name} scored {score!r}, outside [0, 1]: refused, never clipped",
        )
    return _row(
        case,
        started,
        verdict="pass" if outcome.passed else "fail",
        why=outcome.why,
        measures={"score": float(score)},
    )
