"""``trajectory_tool_not_used``: the agent never called ``tool_name``.

Options: ``tool_name`` (matched exactly against each tool call's
``function_name``), ``path`` (:mod:`._trajectory`).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..context import Context
from ..kind import CriterionKind, Outcome
from ..values import shown
from ._trajectory import TrajectoryOptions


class TrajectoryToolNotUsed(TrajectoryOptions):
    tool_name: Annotated[str, Field(min_length=1)]


def evaluate(options: TrajectoryToolNotUsed, context: Context) -> Outcome:
    uses = context.trajectories.get(options.path).tool_uses(options.tool_name)
    return Outcome.binary(
        uses == 0, f"the agent called {shown(options.tool_name)} {uses} times, and must not"
    )


CRITERION = CriterionKind(
    name="trajectory_tool_not_used",
    description="the agent never called a tool",
    options=TrajectoryToolNotUsed,
    evaluate=evaluate,
    needs="trajectory",
)
