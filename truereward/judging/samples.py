"""Repeated samples of one criterion: the judge asked ``n`` times, one verdict.

Each sample is one call's decision (or abstention), whether it passes, its
score from 0 to 1 and the judge's confidence. :func:`combine` reduces them:
any abstention abstains; ``majority`` (default) takes a strict majority's
verdict, a tie abstains; ``unanimous`` abstains on any disagreement. The
score is the samples' median, ``agreement`` the share that gave the
verdict, ``confidence`` the lowest. A provider failure is not a sample.
docs/calibrate.md, "Repeated samples".
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .answers import Decision
from .errors import JudgeError

__all__ = ["AGREEMENTS", "Combined", "Sample", "combine"]

#: The agreement rules :func:`combine` knows.
AGREEMENTS = ("majority", "unanimous")


@dataclass(frozen=True, slots=True)
class Sample:
    """What one call decided about a criterion. ``decision`` is None for an
    abstention (``passed`` and ``score`` then mean nothing)."""

    decision: Decision | None
    passed: bool
    score: float
    confidence: float


@dataclass(frozen=True, slots=True)
class Combined:
    """The samples of one criterion reduced to one verdict."""

    verdict: Literal["pass", "fail", "abstained"]
    why: str
    score: float | None
    agreement: float
    confidence: float


def combine(samples: Sequence[Sample], rule: str = "majority") -> Combined:
    """One verdict from a criterion's samples (at least one), by ``rule``
    (:data:`AGREEMENTS`); see the module documentation."""
    if rule not in AGREEMENTS:
        raise JudgeError(f"agreement: one of {', '.join(AGREEMENTS)}, got {rule!r}")
    if not samples:
        raise JudgeError("a criterion needs at least one sample")
    count = len(samples)
    confidence = min(sample.confidence for sample in samples)
    abstained = sum(sample.decision is None for sample in samples)
    if abstained:
        return Combined(
            "abstained",
            f"undecided in {abstained} of {count} sample{'s' if count > 1 else ''}",
            None,
            abstained / count,
            confidence,
        )
    passes = sum(sample.passed for sample in samples)
    fails = count - passes
    score = statistics.median(sample.score for sample in samples)
    agreement = max(passes, fails) / count
    # unanimous: every sample gave the verdict; majority: more gave it than not.
    decided = passes in (0, count) if rule == "unanimous" else passes != fails
    if not decided:
        return Combined(
            "abstained",
            f"the samples disagreed ({passes} passed, {fails} failed; {rule} needed)",
            score,
            agreement,
            confidence,
        )
    verdict: Literal["pass", "fail"] = "pass" if passes > fails else "fail"
    why = "" if count == 1 else f"{max(passes, fails)} of {count} samples {verdict}ed it"
    return Combined(verdict, why, score, agreement, confidence)
