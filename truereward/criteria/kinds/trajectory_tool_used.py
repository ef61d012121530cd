"""``trajectory_tool_used``: the agent called ``tool_name`` at least
``min_count`` times (default 1).

Options: ``tool_name`` (matched exactly against each tool call's
``function_name``), ``min_count``, ``path`` (:mod:`._trajectory`). Only the
trajectory's own steps count, not embedded subagents'.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..context import Context
from ..kind import CriterionKind, Outcome
from ..values import shown
from ._trajectory import TrajectoryOptions


class TrajectoryToolUsed(TrajectoryOptions):
    tool_name: Annotated[str, Field(min_length=1)]
    min_count: Annotated[int, Field(ge=1)] = 1


def evaluate(options: TrajectoryToolUsed, context: Context) -> Outcome:
    uses = context.trajectories.get(options.path).tool_uses(options.tool_name)
    return Outcome.binary(
        uses >= options.min_count,
        f"the agent called {shown(options.tool_name)} {uses} times, "
        f"at least {options.min_count} expected",
    )


CRITERION = CriterionKind(
    name="trajectory_tool_used",
    description="the agent called a tool (at least so many times)",
    options=TrajectoryToolUsed,
    evaluate=evaluate,
    needs="trajectory",
)
