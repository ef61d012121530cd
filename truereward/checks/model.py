"""What scoring produces: a check's result, a case's outcome, and the summary.

Plain slotted dataclasses rather than pydantic models: they are built once per
check on the hot path (millions per run) from values the scorer has already
validated, and they never come from outside. They are not ``frozen`` only
because a frozen dataclass costs several times more to build; treat them as
read-only. ``to_json`` gives ai-eval-forge's JSON shape, so consumers of its
output keep working.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..codes.checks import CHECK_GAVE_UP

__all__ = ["CaseMeta", "CaseOutcome", "CheckResult", "Measurement", "Summary"]


@dataclass(slots=True)
class Measurement:
    """What a check measured on one case.

    ``value`` is the score as ai-eval-forge computes it (a float in [0, 1]);
    ``exact`` is the same score as an exact ratio ``(numerator, denominator)``,
    used for the threshold; ``detail`` is a short human explanation."""

    value: float
    exact: tuple[int, int]
    detail: str = ""


@dataclass(slots=True)
class CheckResult:
    """One check on one case.

    ``score`` is rounded to four decimals; ``passed`` says whether it reached
    ``min`` (see :func:`truereward.checks.numbers.judge`). ``params`` are the
    check's own validated parameters (``{"caseSensitive": False, "value":
    [...]}``), kept so that a result can later become an evaluation report
    (metric ``checks/<type>`` with these parameters); they are not part of
    ai-eval-forge's JSON shape and :meth:`to_json` leaves them out."""

    type: str
    required: bool
    passed: bool
    score: float
    min: float
    detail: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{type, required, passed, score, min, detail}``."""
        return {
            "type": self.type,
            "required": self.required,
            "passed": self.passed,
            "score": self.score,
            "min": self.min,
            "detail": self.detail,
        }


@dataclass(slots=True)
class CaseMeta:
    """What the case file says about the case besides its checks."""

    input: Any = None
    tags: tuple[Any, ...] = ()
    cost_usd: float = 0.0
    latency_ms: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """``{input, tags, costUsd, latencyMs}`` (ai-eval-forge's keys)."""
        return {
            "input": self.input,
            "tags": list(self.tags),
            "costUsd": self.cost_usd,
            "latencyMs": self.latency_ms,
        }


@dataclass(slots=True)
class CaseOutcome:
    """One case, scored or not.

    A scored case has its check results, ``passed`` (every required check
    passed; when every check is optional, every check passed) and ``score``
    (the mean of the reported check scores, rounded to four decimals). A case
    that could not be scored (a malformed line, a bad check) has ``error``,
    no checks, ``passed`` false and ``score`` None: it is not a score of 0.
    ``warnings`` name inputs that were read in a way the author may not
    expect (``"required": 0`` keeps the check required). ``gave_up`` marks
    an error that is the grader's bound, not bad input: a check gave up
    within its time bounds (its ``error`` says which, and the bounds), so
    nothing was measured; its JSON ``error`` carries the refusal code
    ``CHECK_GAVE_UP``."""

    id: str
    passed: bool
    score: float | None
    checks: tuple[CheckResult, ...] = ()
    meta: CaseMeta = field(default_factory=CaseMeta)
    warnings: tuple[str, ...] = ()
    error: str | None = None
    gave_up: bool = False

    @property
    def errored(self) -> bool:
        """Whether the case could not be scored."""
        return self.error is not None

    def to_json(self, *, file: str | None = None, line: int | None = None) -> dict[str, Any]:
        """ai-eval-forge's case shape ``{id, passed, score, checks, meta}``,
        plus ``warnings`` when there are some and ``error`` (``{file, line,
        message}``, and ``code`` when a check gave up) when the case could not
        be scored."""
        out: dict[str, Any] = {
            "id": self.id,
            "passed": self.passed,
            "score": self.score,
            "checks": [check.to_json() for check in self.checks],
            "meta": self.meta.to_json(),
        }
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.error is not None:
            out["error"] = {"file": file, "line": line, "message": self.error}
            if self.gave_up:
                out["error"]["code"] = CHECK_GAVE_UP
        return out


@dataclass(slots=True)
class Summary:
    """The suite in numbers, ai-eval-forge's fields plus ``errors``.

    ``total`` counts every case, ``passed`` the cases that passed, ``failed``
    the rest (errored cases included: they did not pass), ``passRate`` is
    passed / total. ``averageScore``, ``totalCostUsd`` and
    ``averageLatencyMs`` are taken over the scored cases only (an errored
    case has no score). With no case (or no scored case) the rates and
    averages are 0, as in ai-eval-forge. Without errors every field equals
    ai-eval-forge's."""

    total: int
    passed: int
    failed: int
    pass_rate: float
    average_score: float
    total_cost_usd: float
    average_latency_ms: int
    errors: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "passed": self.passed,
            "failed": self.failed,
            "passRate": self.pass_rate,
            "averageScore": self.average_score,
            "totalCostUsd": self.total_cost_usd,
            "averageLatencyMs": self.average_latency_ms,
            "errors": self.errors,
        }
