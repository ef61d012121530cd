"""What a fold returns: the reward or the reasons there is none, and the
figures beside it."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from ..record.cases import CheckAnswer, Kind
from ..record.refusal import Refusal
from ..record.scoring import Scoring
from ..util.frozen import EMPTY, FrozenMap, Items, is_absent, is_empty

__all__ = [
    "CaseCounts",
    "FailedIds",
    "Fold",
    "FoldInputs",
    "KindCounts",
    "RunCheck",
]

_FROZEN = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False)


class KindCounts(BaseModel):
    """Counts of the rows of one kind. ``total = graded + ungradable`` and
    ``graded = passed + failed``."""

    model_config = _FROZEN

    total: int
    graded: int
    passed: int
    failed: int
    ungradable: int


class CaseCounts(KindCounts):
    """Counts over every row, and per kind. ``declared`` is the number of
    valid declarations in the case set, or ``None`` when the fold had none."""

    fail_to_pass: KindCounts
    pass_to_pass: KindCounts
    declared: int | None = None


class FailedIds(BaseModel):
    """The ids of graded rows that failed, per kind, sorted (an id appears
    once however many rows carry it)."""

    model_config = _FROZEN

    fail_to_pass: Items[str]
    pass_to_pass: Items[str]


class RunCheck(BaseModel):
    """A run check over the whole run: it holds when every answer holds.
    ``answered`` counts the answers; ``why`` joins the reasons of the answers
    that did not hold."""

    model_config = _FROZEN

    check: str
    code: str
    holds: bool
    answered: int
    why: str = ""


class Fold(BaseModel):
    """The outcome of folding the rows of one run under a scheme.

    - ``gradable`` is true exactly when ``refusals`` is empty.
    - ``reward`` is a float (``1.0``/``0.0`` under ``gated-binary/1``) when
      gradable, and ``None`` otherwise: never 0 for an ungradable run.
    - ``guards_hold``: every graded pass-to-pass row passed (true when there
      is none).
    - ``fix_rate``: passed / graded fail-to-pass rows, not gated by the
      guards; ``None`` when no fail-to-pass row was graded.
    - ``case_fraction``: passed / graded rows; ``None`` when nothing was
      graded.
    - ``flaky``: the ids of the rows that passed after a failed rerun
      (sorted); flakiness never changes the reward.
    - ``dimensions``: each named reward dimension's value when the task
      declares dimensions (``None`` for one with no value: something under
      it was not graded); the reward is the primary dimension's value.
    The rates, counts and dimension values are over the graded rows even
    when the run is not gradable; they describe what was measured, they
    are not a grade (only a gradable run has a reward and reward files).
    """

    model_config = _FROZEN

    scheme: str
    gradable: bool
    reward: float | None
    guards_hold: bool
    fix_rate: float | None
    case_fraction: float | None
    cases: CaseCounts
    failed: FailedIds
    refusals: Items[Refusal]
    checks: Items[RunCheck]
    # Added after documents were first published: left out when it holds
    # nothing, so a document written before it keeps its bytes (and its
    # digest) when read and written again.
    flaky: Annotated[Items[str], Field(exclude_if=is_empty)] = ()
    # Added with schema version 4: left out when there are none.
    dimensions: Annotated[FrozenMap[str, float | None], Field(exclude_if=is_empty)] = EMPTY

    @property
    def blame(self) -> set[str]:
        """Who failed, over every refusal (empty when gradable)."""
        return {item.blame.value for item in self.refusals}

    @property
    def codes(self) -> list[str]:
        """The distinct refusal codes, sorted."""
        return sorted({item.code for item in self.refusals})


class FoldInputs(BaseModel):
    """Everything besides the rows that a fold took, normalised and sorted, so
    that a stored document can be folded again (``truereward verify``).

    ``case_set`` holds the valid declarations (``None`` when the fold had no
    case set); invalid declarations are ``CASE_INVALID`` entries of
    ``refusals``, beside the refusals given from outside the rows. ``checks``
    are run-check answers given beside the rows' own. ``scoring`` is the
    task's declared scoring (:class:`~truereward.record.scoring.Scoring`: weights,
    required flags, threshold, dimensions), left out when it declares none
    (schema version 4 when present).
    """

    model_config = _FROZEN

    case_set: FrozenMap[str, Kind] | None = None
    refusals: Items[Refusal] = ()
    checks: Items[CheckAnswer] = ()
    scoring: Annotated[Scoring | None, Field(exclude_if=is_absent)] = None
