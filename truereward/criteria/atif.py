"""Harbor's agent trajectories (ATIF, the Agent Trajectory Interchange Format).

:func:`parse` reads ``trajectory.json`` as strict JSON and checks the part
criteria rely on, as Harbor's model does: a version ``ATIF-vN.M``, an agent
with a name, steps with sequential ids and a known ``source``, tool calls
only on agent steps, each with a string ``function_name`` and an object of
``arguments``; other fields are not checked (later versions may add some).
Anything else is ``TRAJECTORY_MALFORMED``, the grader's (the harness wrote
it). Only top-level steps count, not embedded subagents'. docs/criteria.md.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, model_validator

from ..codes import Ungradable
from ..util.strictjson import StrictJSONError, loads
from .codes import TRAJECTORY_MALFORMED

__all__ = ["Step", "ToolCall", "Trajectory", "parse"]

_OPEN = ConfigDict(extra="allow", frozen=True, strict=True)


class ToolCall(BaseModel):
    """One tool call of an agent step."""

    model_config = _OPEN

    tool_call_id: str
    function_name: str
    arguments: dict[str, JsonValue]


class Step(BaseModel):
    """One step: who spoke, and the tool calls of an agent's step."""

    model_config = _OPEN

    step_id: Annotated[int, Field(ge=1)]
    source: Literal["system", "user", "agent"]
    tool_calls: list[ToolCall] | None = None

    @model_validator(mode="after")
    def _tool_calls_are_the_agents(self) -> Step:
        if self.tool_calls is not None and self.source != "agent":
            raise ValueError(f"tool_calls on a {self.source} step (only agent steps make them)")
        return self


class Agent(BaseModel):
    """The agent that ran."""

    model_config = _OPEN

    name: str


class Trajectory(BaseModel):
    """An ATIF trajectory (module docstring)."""

    model_config = _OPEN

    schema_version: Annotated[str, Field(pattern=r"^ATIF-v[0-9]+\.[0-9]+$")]
    agent: Agent
    steps: Annotated[list[Step], Field(min_length=1)]

    @model_validator(mode="after")
    def _steps_in_order(self) -> Trajectory:
        for index, step in enumerate(self.steps):
            if step.step_id != index + 1:
                raise ValueError(
                    f"steps[{index}].step_id: {step.step_id}, expected {index + 1} "
                    "(sequential from 1)"
                )
        return self

    @property
    def turns(self) -> int:
        """The agent's turns: its steps (``source`` ``agent``)."""
        return sum(1 for step in self.steps if step.source == "agent")

    def tool_uses(self, name: str) -> int:
        """How many tool calls name ``name`` (exactly, case-sensitive)."""
        return sum(
            1 for step in self.steps for call in step.tool_calls or () if call.function_name == name
        )


def parse(data: bytes, where: str) -> Trajectory:
    """The trajectory in ``data`` (named ``where`` in the refusal), or
    ``TRAJECTORY_MALFORMED``."""
    from ..record.validation import describe

    try:
        document = loads(data)
    except StrictJSONError as error:
        raise Ungradable(TRAJECTORY_MALFORMED, f"{where}: not JSON: {error}") from None
    if not isinstance(document, dict):
        raise Ungradable(
            TRAJECTORY_MALFORMED,
            f"{where}: a trajectory is a JSON object, not {type(document).__name__}",
        )
    try:
        return Trajectory.model_validate(document)
    except ValidationError as error:
        raise Ungradable(
            TRAJECTORY_MALFORMED, f"{where}: not an ATIF trajectory: {describe(error)}"
        ) from None
