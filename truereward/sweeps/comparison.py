"""Comparing two sweeps: runs paired by id.

Every run id of either sweep lands under exactly one heading (regressions,
fixes, unchanged, newly ungradable, newly gradable, still ungradable, added,
removed); a run without a reward is never a regression or a fix, and a delta
with a side without a value is absent, never 0. A delta past the float range
(``weighted-sum/1`` rewards of 1e308 and -1e308) is ``ArithmeticError``,
naming the run. :func:`compare_runs` is pure and streaming; :func:`compare`
pairs two iterables of records by id.
docs/sweeps.md, "Compare", gives the headings and the deltas.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from ..evaluate.distribution import DistributionDelta, ValueCounts
from .record import RunRecord, RunState
from .summary import FROZEN, Count, SummaryBuilder, SweepSummary

__all__ = [
    "NoReward",
    "RewardChange",
    "SweepComparison",
    "compare",
    "compare_runs",
    "pair_records",
]


class RewardChange(BaseModel):
    """A run gradable on both sides whose reward changed."""

    model_config = FROZEN

    run: str
    baseline: float
    candidate: float
    delta: float


class NoReward(BaseModel):
    """A run without a reward on one side: ``state`` there (``ungradable``
    or ``unreadable``), its refusal ``codes`` and ``blame``, or ``why`` it is
    unreadable; ``reward`` on the other side when it had one."""

    model_config = FROZEN

    run: str
    state: Literal["ungradable", "unreadable"]
    codes: list[str] = Field(default_factory=list)
    blame: list[str] = Field(default_factory=list)
    why: str | None = None
    reward: float | None = None


class SweepComparison(BaseModel):
    """A candidate sweep against a baseline (see the module docstring)."""

    model_config = FROZEN

    baseline: SweepSummary
    candidate: SweepSummary
    paired: Count
    regressions: list[RewardChange]
    fixes: list[RewardChange]
    unchanged: Count
    newly_ungradable: list[NoReward]
    newly_gradable: list[NoReward]
    still_ungradable: list[str]
    added: list[str]
    removed: list[str]
    reward_delta: DistributionDelta
    paired_reward_delta: DistributionDelta


def _no_reward(record: RunRecord, reward: float | None) -> NoReward:
    return NoReward(
        run=record.run,
        state="unreadable" if record.state is RunState.UNREADABLE else "ungradable",
        codes=list(record.codes),
        blame=list(record.blames),
        why=record.problem,
        reward=reward,
    )


def compare_runs(
    pairs: Iterable[tuple[str, RunRecord | None, RunRecord | None]],
) -> SweepComparison:
    """Compare paired runs: ``(run id, baseline record or None, candidate
    record or None)``, each id once. Pure, one pass."""
    base_summary, cand_summary = SummaryBuilder(), SummaryBuilder()
    paired = unchanged = 0
    regressions: list[RewardChange] = []
    fixes: list[RewardChange] = []
    newly_ungradable: list[NoReward] = []
    newly_gradable: list[NoReward] = []
    still_ungradable: list[str] = []
    added: list[str] = []
    removed: list[str] = []
    paired_base, paired_cand = ValueCounts(), ValueCounts()
    for run, base, cand in pairs:
        if base is not None:
            base_summary.add(base)
        if cand is not None:
            cand_summary.add(cand)
        if base is None and cand is None:
            continue
        if base is None:
            added.append(run)
            continue
        if cand is None:
            removed.append(run)
            continue
        paired += 1
        if base.reward is not None and cand.reward is not None:
            paired_base.add(base.reward)
            paired_cand.add(cand.reward)
            if cand.reward == base.reward:
                unchanged += 1
                continue
            delta = cand.reward - base.reward
            if not math.isfinite(delta):
                raise ArithmeticError(
                    f"run {run}: its reward went from {base.reward!r} to {cand.reward!r}, "
                    "a change past the float range"
                )
            change = RewardChange(run=run, baseline=base.reward, candidate=cand.reward, delta=delta)
            (regressions if cand.reward < base.reward else fixes).append(change)
        elif base.reward is not None:
            newly_ungradable.append(_no_reward(cand, base.reward))
        elif cand.reward is not None:
            newly_gradable.append(_no_reward(base, cand.reward))
        else:
            still_ungradable.append(run)
    baseline, candidate = base_summary.result(), cand_summary.result()
    return SweepComparison(
        baseline=baseline,
        candidate=candidate,
        paired=paired,
        regressions=regressions,
        fixes=fixes,
        unchanged=unchanged,
        newly_ungradable=newly_ungradable,
        newly_gradable=newly_gradable,
        still_ungradable=still_ungradable,
        added=added,
        removed=removed,
        reward_delta=DistributionDelta.between(baseline.reward, candidate.reward),
        paired_reward_delta=DistributionDelta.between(
            paired_base.distribution(), paired_cand.distribution()
        ),
    )


def pair_records(
    baseline: Iterable[RunRecord], candidate: Iterable[RunRecord]
) -> list[tuple[str, RunRecord | None, RunRecord | None]]:
    """Pair two sweeps' records by run id (sorted by id). ``ValueError``
    when one side names a run twice."""
    sides: list[dict[str, RunRecord]] = [{}, {}]
    for side, records in zip(sides, (baseline, candidate), strict=True):
        for record in records:
            if record.run in side:
                raise ValueError(f"run {record.run!r} appears twice in one sweep")
            side[record.run] = record
    base, cand = sides
    return [(run, base.get(run), cand.get(run)) for run in sorted(base.keys() | cand.keys())]


def compare(baseline: Iterable[RunRecord], candidate: Iterable[RunRecord]) -> SweepComparison:
    """Compare two sweeps given as records (paired by run id)."""
    return compare_runs(pair_records(baseline, candidate))
