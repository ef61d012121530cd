"""Metric: what an evaluation measured, as a structured identity.

A metric is identified by all five of its fields: ``namespace``, ``name``,
``unit``, ``direction`` and ``parameters``. Two reports are summarised
together only when their metrics are equal in all five, so a latency in
milliseconds is never averaged with a latency in seconds, and an F1 at
threshold 0.5 never with one at 0.7. Configuration goes into ``parameters``,
never into the name.

``unit`` and ``direction`` describe the raw ``measurement`` of a report; a
:class:`~truereward.evaluate.Score` is always unitless and higher-is-better.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
)

from ..util.frozen import is_empty
from .jsondepth import check_json_depth

__all__ = ["COMPOSITE", "SUITE", "Direction", "Metric", "MetricKey"]

#: The name of the metric a :class:`~truereward.evaluate.CompositeEvaluator` reports.
COMPOSITE = "composite"
#: The name of the metric a :class:`~truereward.evaluate.SuiteEvaluator` reports.
SUITE = "suite"

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class Direction(StrEnum):
    """How a raw measurement relates to quality. Unspecified unless said;
    left out of a metric's JSON when unspecified."""

    HIGHER_IS_BETTER = "higher_is_better"
    LOWER_IS_BETTER = "lower_is_better"
    UNSPECIFIED = "unspecified"


def _check_text(value: str, what: str, *, empty_ok: bool, slash_ok: bool) -> str:
    if not value:
        if empty_ok:
            return value
        raise ValueError(f"a metric {what} must not be empty")
    if len(value) > 256:
        raise ValueError(f"a metric {what} has at most 256 characters, got {len(value)}")
    if value.strip() != value:
        raise ValueError(f"a metric {what} must not start or end with whitespace")
    if _CONTROL.search(value):
        raise ValueError(f"a metric {what} must not contain control characters")
    if not slash_ok and "/" in value:
        raise ValueError(f"a metric {what} must not contain '/' (str() joins namespace/name)")
    return value


def _namespace(value: str) -> str:
    # No "/" here either: str() is namespace/name, and "a/b" + "c" must not
    # read as "a" + "b/c" (two metrics would print the same).
    return _check_text(value, "namespace", empty_ok=True, slash_ok=False)


def _name(value: str) -> str:
    return _check_text(value, "name", empty_ok=False, slash_ok=False)


def _unit(value: str) -> str:
    return _check_text(value, "unit", empty_ok=True, slash_ok=True)


def _parameters(value: dict[str, JsonValue]) -> dict[str, JsonValue]:
    check_json_depth(value, "parameters")
    return value


#: A hashable form of a metric's identity (see :meth:`Metric.key`).
MetricKey = tuple[str, str, str, str, Any]


def _freeze(value: Any) -> Any:
    """A hashable, type-tagged form of a JSON value: ``True`` and ``1`` differ
    (a bool is never a number), ``1`` and ``1.0`` are the same number."""
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, list | tuple):
        return ("array", tuple(_freeze(item) for item in value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((key, _freeze(item)) for key, item in value.items())))
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def _unspecified(direction: Direction) -> bool:
    return direction is Direction.UNSPECIFIED


class Metric(BaseModel):
    """What an evaluation measured.

    - ``name``: required; no ``/``, no control characters, no surrounding
      whitespace, at most 256 characters.
    - ``namespace``: optional (``""``), the same rules (no ``/``: ``str()``
      joins ``namespace/name``, so a slash in either could make two metrics
      print alike).
    - ``unit``: of the raw measurement (``"ms"``), optional.
    - ``direction``: of the raw measurement, optional.
    - ``parameters``: structured configuration that is part of the identity
      (``{"threshold": 0.5}``); strict JSON values, nested at most 64 deep.

    Equality and hashing use all five fields (``parameters`` compared as
    JSON: key order does not matter, ``true`` is not ``1``, ``1`` is
    ``1.0``). ``str()`` is ``namespace/name``, or ``name`` without a
    namespace. The parameters are copied on construction; do not mutate
    them afterwards (the metric's hash would change).
    """

    model_config = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False)

    # Like the seed's `omitzero`: an unset field is absent from the JSON, so
    # a metric's JSON says only what was given (exclude_if).
    namespace: Annotated[
        str, Field(max_length=256, exclude_if=is_empty), AfterValidator(_namespace)
    ] = ""
    name: Annotated[str, Field(min_length=1, max_length=256), AfterValidator(_name)]
    unit: Annotated[str, Field(exclude_if=is_empty), AfterValidator(_unit)] = ""
    direction: Annotated[Direction, Field(strict=False, exclude_if=_unspecified)] = (
        Direction.UNSPECIFIED
    )
    parameters: Annotated[
        dict[str, JsonValue], Field(exclude_if=is_empty), AfterValidator(_parameters)
    ] = Field(default_factory=dict)

    def key(self) -> MetricKey:
        """The metric's identity as a hashable tuple of all five fields."""
        return (
            self.namespace,
            self.name,
            self.unit,
            self.direction.value,
            _freeze(self.parameters),
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Metric):
            return NotImplemented
        return self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name
