"""What a criterion kind is, and what it answers.

A :class:`CriterionKind` is a name, a pydantic model of its options and
``evaluate(options, context)``, which answers with an :class:`Outcome` (a
score in [0, 1] and ``passed``: :meth:`Outcome.binary`, or
:meth:`Outcome.graded` against the case's ``min``), raises :class:`Failure`
(the run's, found before anything could be scored: the case fails, score
0.0), or raises :class:`~truereward.codes.Ungradable` (nothing measured; the
code says whose fault). A kind ``needs`` a ``workspace`` or a
``trajectory``. docs/criteria.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..util.exceptions import TruerewardError

if TYPE_CHECKING:
    from .context import Context

__all__ = ["CriterionKind", "Failure", "GradedOptions", "Needs", "Options", "Outcome"]

#: What a criterion reads: a workspace (files, commands, services) or a trajectory.
Needs = Literal["workspace", "trajectory"]


class Options(BaseModel):
    """The base of every kind's options: strict (no coercion: ``"1"`` is not
    a number, ``1`` is not ``true``), unknown keys refused, frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class GradedOptions(Options):
    """Options of a criterion graded by degree: ``min``, the score it must
    reach to pass (default 1.0: only a perfect score passes; the score
    itself is in the row's ``measures["score"]`` whatever the verdict)."""

    min: Annotated[float, Field(ge=0.0, le=1.0)] = 1.0


class Failure(TruerewardError):
    """The run's failure: the case fails (score 0.0) and the message is its why."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """A measured case: its score in [0, 1], whether it passed, and why not."""

    score: float
    passed: bool
    why: str = ""

    @classmethod
    def binary(cls, passed: bool, why: str = "") -> Outcome:
        """A pass (1.0) or a fail (0.0); ``why`` is kept for a fail only."""
        return cls(score=1.0 if passed else 0.0, passed=passed, why="" if passed else why)

    @classmethod
    def graded(cls, score: float, minimum: float, why: str = "") -> Outcome:
        """A score that passes when it reaches ``minimum``; ``why`` says what
        was measured (kept on a pass too, with the score)."""
        return cls(score=score, passed=score >= minimum, why=why)


@dataclass(frozen=True)
class CriterionKind:
    """A kind of criterion: ``evaluate(options, context)`` is given the
    case's options validated by ``options`` (the ``criterion`` key
    removed)."""

    name: str
    description: str
    options: type[Options]
    evaluate: Callable[[Any, Context], Outcome]
    needs: Needs = "workspace"
