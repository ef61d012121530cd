"""``mean-score/1``: the mean of the case scores, for criteria checks.

The reward of a gradable run is the mean, over its rows, of each case's
score: the row's ``measures["score"]`` when the reader measured one (a
criteria check's score, clamped to [0, 1]), else 1.0 for a passed case and
0.0 for a failed one. Guards and fixes count alike: every criterion weighs
the same. The refusal rules are the shared ones (a gradable run has at least
one graded row, so the mean is defined).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..registry import Scheme
from ..rules import Tally

#: The measure a reader writes a case's score under.
SCORE = "score"


def case_score(measures: Mapping[str, float], verdict: str) -> float:
    """A case's score in [0, 1]: its measured score, or 1/0 by verdict."""
    measured = measures.get(SCORE)
    if measured is not None and math.isfinite(measured):
        return min(1.0, max(0.0, measured))
    return 1.0 if verdict == "pass" else 0.0


def mean_score(tally: Tally) -> float:
    """The mean case score over the graded rows."""
    scores = [case_score(row.measures, row.verdict) for row in tally.rows if row.graded]
    return math.fsum(scores) / len(scores) if scores else 0.0


SCHEME = Scheme(
    name="mean-score/1",
    description="the mean of the case scores (measures['score'], else 1/0 by verdict)",
    reward=mean_score,
    bounds=(0.0, 1.0),
)
