"""ExperimentSummary and MetricSummary: counts and distributions.

Over the cases of an experiment:

- ``total``: every case; ``evaluated``: cases with a report; ``errors``:
  cases without one (the evaluator raised, or ``fail_fast`` stopped before
  or while evaluating them; ``not_evaluated`` counts the latter, within
  ``errors``). ``Total = Evaluated + Errors``.
- ``passed``, ``failed``, ``unjudged``: evaluated cases whose top-level
  verdict is pass, fail, or unspecified. ``Evaluated = Passed + Failed +
  Unjudged``. An error is never unjudged, and never failed.

Per metric (``metrics``), over every report of every evaluated case, walking
``details`` (so a suite's or composite's children are summarised under their
own metrics): reports are grouped by **full** metric identity (namespace,
name, unit, direction, parameters), never by name alone; each group has the
same verdict counts and the :class:`~truereward.evaluate.Distribution` of its
scores and of its measurements (absent, count 0, when no report of that
metric had one). Metrics are listed in order of first appearance.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .distribution import Distribution, ValueCounts
from .metric import Metric, MetricKey
from .outcome import CaseStatus, EvaluationOutcome
from .report import EvaluationReport
from .verdict import EvaluationVerdict

__all__ = ["ExperimentSummary", "MetricSummary", "summarize"]

_FROZEN = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False)
Count = Annotated[int, Field(ge=0)]


class MetricSummary(BaseModel):
    """The reports of one metric (full identity): ``evaluated`` reports,
    of which ``passed``, ``failed`` and ``unjudged`` (unspecified verdict);
    the distributions of their ``scores`` and ``measurements``."""

    model_config = _FROZEN

    metric: Metric
    evaluated: Count
    passed: Count
    failed: Count
    unjudged: Count
    scores: Distribution
    measurements: Distribution

    @model_validator(mode="after")
    def _counts_add_up(self) -> MetricSummary:
        if self.evaluated != self.passed + self.failed + self.unjudged:
            raise ValueError("evaluated must equal passed + failed + unjudged")
        if self.scores.count > self.evaluated or self.measurements.count > self.evaluated:
            raise ValueError("a distribution cannot count more values than evaluated reports")
        return self


class ExperimentSummary(BaseModel):
    """The counts of an experiment and its per-metric summaries (see the
    module docstring for the identities that hold)."""

    model_config = _FROZEN

    total: Count
    evaluated: Count
    passed: Count
    failed: Count
    unjudged: Count
    errors: Count
    not_evaluated: Count = 0
    metrics: list[MetricSummary] = Field(default_factory=list)

    @model_validator(mode="after")
    def _counts_add_up(self) -> ExperimentSummary:
        if self.evaluated != self.passed + self.failed + self.unjudged:
            raise ValueError("evaluated must equal passed + failed + unjudged")
        if self.total != self.evaluated + self.errors:
            raise ValueError("total must equal evaluated + errors")
        if self.not_evaluated > self.errors:
            raise ValueError("not_evaluated counts cases within errors")
        return self

    def metric(self, metric: Metric) -> MetricSummary | None:
        """The summary of ``metric`` (full identity), or ``None``."""
        return next((item for item in self.metrics if item.metric == metric), None)


def _verdict_counts(verdicts: Counter[EvaluationVerdict]) -> dict[str, int]:
    """``evaluated``, ``passed``, ``failed`` and ``unjudged`` of a tally of
    verdicts."""
    return {
        "evaluated": verdicts.total(),
        "passed": verdicts[EvaluationVerdict.PASS],
        "failed": verdicts[EvaluationVerdict.FAIL],
        "unjudged": verdicts[EvaluationVerdict.UNSPECIFIED],
    }


class _MetricTally:
    __slots__ = ("measurements", "metric", "scores", "verdicts")

    def __init__(self, metric: Metric) -> None:
        self.metric = metric
        self.verdicts: Counter[EvaluationVerdict] = Counter()
        self.scores = ValueCounts()
        self.measurements = ValueCounts()

    def add(self, report: EvaluationReport) -> None:
        self.verdicts[report.verdict] += 1
        if report.score is not None:
            self.scores.add(float(report.score))
        if report.measurement is not None:
            self.measurements.add(report.measurement)

    def summary(self) -> MetricSummary:
        return MetricSummary(
            metric=self.metric,
            **_verdict_counts(self.verdicts),
            scores=self.scores.distribution(),
            measurements=self.measurements.distribution(),
        )


def summarize(cases: Iterable[EvaluationOutcome]) -> ExperimentSummary:
    """The summary of case outcomes (streaming: one pass, memory in the
    number of metrics and distinct values)."""
    total = errors = not_evaluated = 0
    verdicts: Counter[EvaluationVerdict] = Counter()
    tallies: dict[MetricKey, _MetricTally] = {}
    for case in cases:
        total += 1
        if case.report is None:
            errors += 1
            not_evaluated += case.status is CaseStatus.NOT_EVALUATED
            continue
        verdicts[case.report.verdict] += 1
        for report in case.report.walk():
            key = report.metric.key()
            if key not in tallies:
                tallies[key] = _MetricTally(report.metric)
            tallies[key].add(report)
    return ExperimentSummary(
        total=total,
        **_verdict_counts(verdicts),
        errors=errors,
        not_evaluated=not_evaluated,
        metrics=[tally.summary() for tally in tallies.values()],
    )
