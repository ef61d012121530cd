"""Comparison and MetricComparison: a candidate experiment against a baseline.

Counts are compared as ``candidate - baseline``. Metrics are paired by full
identity; a metric present on one side only has the other side ``None``
(absent, not a summary of zeros), and its count deltas count the absent side
as no reports. A :class:`~truereward.evaluate.DistributionDelta` (of scores,
of measurements) is present only when both sides have values.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .distribution import Distribution, DistributionDelta
from .metric import Metric, MetricKey
from .summary import ExperimentSummary, MetricSummary

__all__ = ["ExperimentComparison", "MetricComparison", "compare_summaries"]

_FROZEN = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False)
_ABSENT = Distribution(count=0)


class MetricComparison(BaseModel):
    """One metric on both sides. ``baseline``/``candidate`` is ``None`` when
    the metric does not appear on that side."""

    model_config = _FROZEN

    metric: Metric
    baseline: MetricSummary | None
    candidate: MetricSummary | None
    evaluated_delta: int
    passed_delta: int
    failed_delta: int
    unjudged_delta: int
    score_delta: DistributionDelta
    measurement_delta: DistributionDelta


class ExperimentComparison(BaseModel):
    """Candidate minus baseline: the count deltas and, per metric (baseline
    order, then metrics only the candidate has), a :class:`MetricComparison`."""

    model_config = _FROZEN

    baseline: ExperimentSummary
    candidate: ExperimentSummary
    evaluated_delta: int
    passed_delta: int
    failed_delta: int
    unjudged_delta: int
    error_delta: int
    metrics: list[MetricComparison] = Field(default_factory=list)


#: The counts compared as ``<count>_delta`` (an experiment's ``error_delta`` too).
_COUNTS = ("evaluated", "passed", "failed", "unjudged")


def _count(summary: ExperimentSummary | MetricSummary | None, field: str) -> int:
    return 0 if summary is None else int(getattr(summary, field))


def _count_deltas(
    baseline: ExperimentSummary | MetricSummary | None,
    candidate: ExperimentSummary | MetricSummary | None,
) -> dict[str, int]:
    """``<count>_delta`` of each count: candidate minus baseline (an absent
    side counts no reports)."""
    return {f"{name}_delta": _count(candidate, name) - _count(baseline, name) for name in _COUNTS}


def _distribution_delta(
    baseline: MetricSummary | None, candidate: MetricSummary | None, field: str
) -> DistributionDelta:
    sides = [_ABSENT if side is None else getattr(side, field) for side in (baseline, candidate)]
    return DistributionDelta.between(*sides)


def _compare_metric(
    metric: Metric, baseline: MetricSummary | None, candidate: MetricSummary | None
) -> MetricComparison:
    return MetricComparison(
        metric=metric,
        baseline=baseline,
        candidate=candidate,
        **_count_deltas(baseline, candidate),
        score_delta=_distribution_delta(baseline, candidate, "scores"),
        measurement_delta=_distribution_delta(baseline, candidate, "measurements"),
    )


def compare_summaries(
    baseline: ExperimentSummary, candidate: ExperimentSummary
) -> ExperimentComparison:
    """Compare two summaries (candidate minus baseline); see the module
    docstring. ``ArithmeticError`` when a difference of means is not finite."""
    base: dict[MetricKey, MetricSummary] = {item.metric.key(): item for item in baseline.metrics}
    cand: dict[MetricKey, MetricSummary] = {item.metric.key(): item for item in candidate.metrics}
    metrics = [_compare_metric(item.metric, item, cand.get(key)) for key, item in base.items()]
    metrics += [
        _compare_metric(item.metric, None, item) for key, item in cand.items() if key not in base
    ]
    return ExperimentComparison(
        baseline=baseline,
        candidate=candidate,
        **_count_deltas(baseline, candidate),
        error_delta=candidate.errors - baseline.errors,
        metrics=metrics,
    )
