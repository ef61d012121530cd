"""What scoring produces: a check's result, a case's outcome, and the summary.

Plain slotted dataclasses rather than pydantic models: they are built once per
check on the hot path (millions per run) from values the scorer has already
validated, and they never come from outside. They are not ``frozen`` only
because a frozen dataclass costs several times more to build; treat them as
read-only. ``to_json`` gives ai-eval-forge's JSON shape, so consumers of its
output keep working; pydantic writes it (:class:`~truereward.util.dumped.Dumped`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from ..codes.checks import CHECK_GAVE_UP
from ..util.dumped import Dumped
from ..util.frozen import is_empty

if TYPE_CHECKING:
    from ..evaluate.report import EvaluationReport

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
class CheckResult(Dumped):
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
    params: Annotated[Mapping[str, Any], Field(exclude=True)] = field(default_factory=dict)

    def report(self) -> EvaluationReport:
        """This result in the evaluation model: metric ``checks/<type>`` with
        the check's parameters, its verdict, score and detail."""
        # Imported on use: scoring a case file needs none of it.
        from ..evaluate import EvaluationReport, EvaluationVerdict, Metric, Score

        return EvaluationReport(
            metric=Metric(namespace="checks", name=self.type, parameters=dict(self.params)),
            verdict=EvaluationVerdict.of(self.passed),
            score=Score(self.score),
            feedback=self.detail,
        )


@dataclass(slots=True)
class CaseMeta(Dumped):
    """What the case file says about the case besides its checks; its JSON
    has ai-eval-forge's keys ``{input, tags, costUsd, latencyMs}``."""

    input: Any = None
    tags: tuple[Any, ...] = ()
    cost_usd: Annotated[float, Field(serialization_alias="costUsd")] = 0.0
    latency_ms: Annotated[float, Field(serialization_alias="latencyMs")] = 0.0


@dataclass(slots=True)
class CaseOutcome(Dumped):
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
    warnings: Annotated[tuple[str, ...], Field(exclude_if=is_empty)] = ()
    # Written by to_json: its JSON says where the case is, which only the caller knows.
    error: Annotated[str | None, Field(exclude=True)] = None
    gave_up: Annotated[bool, Field(exclude=True)] = False

    @property
    def errored(self) -> bool:
        """Whether the case could not be scored."""
        return self.error is not None

    def report(self) -> EvaluationReport:
        """A scored case in the evaluation model: metric ``checks/case``,
        its verdict and score, each check's report as a detail."""
        from ..evaluate import EvaluationReport, EvaluationVerdict, Metric, Score

        return EvaluationReport(
            metric=Metric(namespace="checks", name="case"),
            verdict=EvaluationVerdict.of(self.passed),
            score=None if self.score is None else Score(self.score),
            details=[check.report() for check in self.checks],
        )

    def to_json(self, *, file: str | None = None, line: int | None = None) -> dict[str, Any]:
        """ai-eval-forge's case shape ``{id, passed, score, checks, meta}``,
        plus ``warnings`` when there are some and ``error`` (``{file, line,
        message}``, and ``code`` when a check gave up) when the case could not
        be scored."""
        out = Dumped.to_json(self)
        if self.error is not None:
            out["error"] = {"file": file, "line": line, "message": self.error}
            if self.gave_up:
                out["error"]["code"] = CHECK_GAVE_UP
        return out


@dataclass(slots=True)
class Summary(Dumped):
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
    pass_rate: Annotated[float, Field(serialization_alias="passRate")]
    average_score: Annotated[float, Field(serialization_alias="averageScore")]
    total_cost_usd: Annotated[float, Field(serialization_alias="totalCostUsd")]
    average_latency_ms: Annotated[int, Field(serialization_alias="averageLatencyMs")]
    errors: int = 0
