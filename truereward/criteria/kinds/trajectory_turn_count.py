"""``trajectory_turn_count``: the agent took a number of turns within
bounds, graded by degree.

A turn is a step whose ``source`` is ``agent``. Options: ``max_turns``,
``min_turns``, ``equals`` (at least one), ``decay`` (default true), ``min``
(the passing score, default 1.0), ``path``. Score: 1.0 within the bounds;
over ``max_turns``, decaying linearly to 0.0 at twice it (rewardkit's
``1 - (turns - max) / max``), or 0.0 at once without decay or when
``max_turns`` is 0; under ``min_turns`` or other than ``equals``, 0.0.
docs/criteria.md.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from ..context import Context
from ..kind import CriterionKind, GradedOptions, Outcome
from ._trajectory import TrajectoryOptions

Count = Annotated[int, Field(ge=0)]


class TrajectoryTurnCount(TrajectoryOptions, GradedOptions):
    max_turns: Count | None = None
    min_turns: Count | None = None
    equals: Count | None = None
    decay: bool = True

    @model_validator(mode="after")
    def _bounds(self) -> TrajectoryTurnCount:
        bounds = (self.max_turns, self.min_turns)
        if self.equals is None and bounds == (None, None):
            raise ValueError("give max_turns, min_turns or equals")
        if self.equals is not None and bounds != (None, None):
            raise ValueError("equals goes alone, without max_turns or min_turns")
        if None not in bounds and self.min_turns > self.max_turns:  # type: ignore[operator]
            raise ValueError("min_turns is more than max_turns")
        return self


def score(options: TrajectoryTurnCount, turns: int) -> float:
    """The score of ``turns`` under ``options`` (module docstring)."""
    if options.equals is not None:
        return 1.0 if turns == options.equals else 0.0
    if options.min_turns is not None and turns < options.min_turns:
        return 0.0
    limit = options.max_turns
    if limit is None or turns <= limit:
        return 1.0
    if not options.decay or limit == 0:
        return 0.0
    return max(0.0, 1.0 - (turns - limit) / limit)


def evaluate(options: TrajectoryTurnCount, context: Context) -> Outcome:
    turns = context.trajectories.get(options.path).turns
    bounds = ", ".join(
        f"{name} {value}"
        for name, value in (
            ("at least", options.min_turns),
            ("at most", options.max_turns),
            ("exactly", options.equals),
        )
        if value is not None
    )
    value = score(options, turns)
    return Outcome.graded(value, options.min, f"{turns} agent turns ({bounds}): score {value:.4f}")


CRITERION = CriterionKind(
    name="trajectory_turn_count",
    description="the agent's turns are within bounds (graded, decaying over the maximum)",
    options=TrajectoryTurnCount,
    evaluate=evaluate,
    needs="trajectory",
)
