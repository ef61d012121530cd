"""One declared case, graded as a criterion: its options in, its row out.

:func:`grade_case` reads ``options["criterion"]`` (the kind's name), validates
the rest with the kind's options model and evaluates it:

- an :class:`~.kind.Outcome`: ``pass`` or ``fail``, the score in
  ``measures["score"]`` (what a scheme that weighs scores reads);
- a :class:`~.kind.Failure`: ``fail``, score 0.0, the failure as its why;
- :class:`~truereward.codes.Ungradable`: ``ungradable`` with its code;
- no ``criterion``, an unknown one, options its model refuses, a criterion
  this reader cannot read (a workspace criterion in the ``trajectory``
  reader): ``CASE_INVALID``;
- a kind that crashes, or scores outside [0, 1] (or NaN): ``CASE_NOT_GRADED``,
  the grader's. A score out of range is refused, never clipped: a kind that
  computes 1.5 has a bug, and no reward should rest on it.

``duration_s`` is the time the criterion took.
"""

from __future__ import annotations

import math
import time
from typing import Any

from pydantic import ValidationError

from ..cases import CaseResult
from ..codes import Ungradable
from ..exceptions import UnknownName
from ..taskspec import CaseSpec
from ..validation import describe
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


def _refused(case: CaseSpec, started: float, code: str, why: str) -> CaseResult:
    return _row(case, started, verdict="ungradable", code=code, why=why)


def grade_case(case: CaseSpec, context: Context, *, reads: frozenset[Needs]) -> CaseResult:
    """The row of ``case`` (module docstring); ``reads`` is what the reader
    can give criteria (``workspace``, ``trajectory``)."""
    started = time.monotonic()
    options = dict(case.options)
    name = options.pop("criterion", None)
    if not isinstance(name, str):
        return _refused(
            case,
            started,
            "CASE_INVALID",
            "options.criterion: the criterion's kind, such as file_exists or command_succeeds",
        )
    try:
        kind = get_criterion(name)
    except UnknownName as error:
        return _refused(case, started, "CASE_INVALID", f"options.criterion: {error}")
    if kind.needs not in reads:
        return _refused(
            case,
            started,
            "CASE_INVALID",
            f"criterion {name} reads a {kind.needs}: grade it with the {kind.needs} reader",
        )
    try:
        parsed = kind.options.model_validate(options)
    except ValidationError as error:
        return _refused(
            case, started, "CASE_INVALID", f"criterion {name}: {describe(error, whole='options')}"
        )
    try:
        outcome = kind.evaluate(parsed, context)
    except Failure as failure:
        return _row(case, started, verdict="fail", why=str(failure), measures={"score": 0.0})
    except Ungradable as refused:
        return _refused(case, started, refused.code, f"criterion {name}: {refused.why}")
    except Exception as error:  # noqa: BLE001 - a kind's bug is the grader's, this case's alone
        return _refused(
            case,
            started,
            "CASE_NOT_GRADED",
            f"criterion {name} crashed: {type(error).__name__}: {error}",
        )
    if not isinstance(outcome, Outcome):
        return _refused(
            case,
            started,
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
        return _refused(
            case,
            started,
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
