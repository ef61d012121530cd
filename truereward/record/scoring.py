"""A task's declared scoring: case weights, required cases, a threshold, and
named reward dimensions.

:class:`ScoringSpec` is what a task author writes; :class:`Scoring` is the
resolved form a grade carries (every member with its weight and whether it
is required), so ``truereward verify`` can fold the grade again;
:func:`resolve` turns one into the other. This module checks structure
(names, references, cycles, bounds); what a scheme makes of a member is the
fold's. docs/scoring.md gives the declaration and the rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from ..util.frozen import EMPTY, FrozenMap, Items, is_absent, is_empty
from .cases import CASE_ID_PATTERN, CaseId

__all__ = [
    "MAX_DIMENSIONS",
    "RESERVED_NAMES",
    "Declared",
    "Dimension",
    "DimensionName",
    "DimensionSpec",
    "Member",
    "Scoring",
    "ScoringSpec",
    "resolve",
]

#: The most dimensions one task may declare (rewardkit's layouts have a
#: handful; a bound keeps a hostile spec's fold small).
MAX_DIMENSIONS = 1_000
#: The most members one dimension may have (as many as cases may be declared).
MAX_MEMBERS = 10_000

#: ``reward.json`` keys a published dimension may not take: ``reward`` is
#: the primary's, the others are the figures ``reward_keys`` may add.
RESERVED_NAMES = frozenset({"reward", "fix_rate", "guards_hold", "case_fraction"})

#: A dimension's name: a ``reward.json`` key when published; the rules of a
#: case id (no control characters, no surrounding whitespace), at most 128
#: characters; ``/`` is allowed (rewardkit names nested components so).
DimensionName = Annotated[
    str, StringConstraints(min_length=1, max_length=128, pattern=CASE_ID_PATTERN)
]
#: A scheme's name (``weighted-mean/1``); whether it is known is the fold's check.
SchemeName = Annotated[str, StringConstraints(min_length=3, max_length=128)]

_FROZEN = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False)


def _is_one(value: Any) -> bool:
    return bool(value == 1.0)


def _is_true(value: Any) -> bool:
    return value is True


class Member(BaseModel):
    """One input of a dimension: a case (``case``) or another dimension
    (``dimension``), exactly one; its ``weight`` (default 1.0, left out of
    the document when 1.0) and whether ``required-pass/1`` requires it
    (default true, left out when true)."""

    model_config = _FROZEN

    case: Annotated[CaseId | None, Field(exclude_if=is_absent)] = None
    dimension: Annotated[DimensionName | None, Field(exclude_if=is_absent)] = None
    weight: Annotated[float, Field(exclude_if=_is_one)] = 1.0
    required: Annotated[bool, Field(exclude_if=_is_true)] = True

    @model_validator(mode="after")
    def _one_input(self) -> Member:
        if (self.case is None) == (self.dimension is None):
            raise ValueError("a member names exactly one of 'case' and 'dimension'")
        return self

    @property
    def name(self) -> str:
        """The case id or dimension name."""
        return self.case if self.case is not None else str(self.dimension)


class Dimension(BaseModel):
    """A named reward dimension: its scheme folds its members. ``threshold``
    is ``threshold/1``'s (default: the scheme's); ``digits``, when given,
    rounds the dimension's value to that many decimal places (rewardkit
    rounds every group it aggregates to 4; the rewardkit bridge asks for
    the same, a task's own dimensions are never rounded unless it asks)."""

    model_config = _FROZEN

    name: DimensionName
    scheme: SchemeName
    members: Annotated[Items[Member], Field(min_length=1, max_length=MAX_MEMBERS)]
    threshold: Annotated[float | None, Field(exclude_if=is_absent)] = None
    digits: Annotated[int | None, Field(ge=0, le=15, exclude_if=is_absent)] = None

    @model_validator(mode="after")
    def _distinct_members(self) -> Dimension:
        seen: set[tuple[bool, str]] = set()
        for index, member in enumerate(self.members):
            key = (member.case is not None, member.name)
            if key in seen:
                raise ValueError(f"members[{index}]: {member.name!r} is a member twice")
            seen.add(key)
        return self


class Scoring(BaseModel):
    """The resolved scoring a grade carries (module docstring). Every field
    is left out of the document when it holds nothing.

    - ``scheme``: the scheme the task names (the fold's when the caller
      names none);
    - flat scoring: ``weights`` (case id to weight, the declared ones),
      ``optional`` (case ids ``required-pass/1`` does not require, sorted),
      ``threshold``;
    - dimensions: ``dimensions`` (sorted by name), ``primary`` (the one
      whose value is the reward), ``publish`` (the others ``reward.json``
      carries, sorted).
    """

    model_config = _FROZEN

    scheme: Annotated[SchemeName | None, Field(exclude_if=is_absent)] = None
    weights: Annotated[FrozenMap[CaseId, float], Field(exclude_if=is_empty)] = EMPTY
    optional: Annotated[Items[CaseId], Field(exclude_if=is_empty)] = ()
    threshold: Annotated[float | None, Field(exclude_if=is_absent)] = None
    dimensions: Annotated[
        Items[Dimension], Field(exclude_if=is_empty, max_length=MAX_DIMENSIONS)
    ] = ()
    primary: Annotated[DimensionName | None, Field(exclude_if=is_absent)] = None
    publish: Annotated[Items[DimensionName], Field(exclude_if=is_empty)] = ()

    @model_validator(mode="after")
    def _structure(self) -> Scoring:
        if list(self.optional) != sorted(set(self.optional)):
            raise ValueError("optional: case ids sorted, each once")
        if list(self.publish) != sorted(set(self.publish)):
            raise ValueError("publish: dimension names sorted, each once")
        if not self.dimensions:
            if self.primary is not None or self.publish:
                raise ValueError("primary and publish name dimensions, and none is declared")
            return self
        if self.weights or self.optional or self.threshold is not None:
            raise ValueError(
                "with dimensions, weights, optional cases and thresholds belong to the "
                "dimensions, not to the whole task"
            )
        names = [dimension.name for dimension in self.dimensions]
        if names != sorted(set(names)):
            raise ValueError("dimensions: sorted by name, each name once")
        _check_graph(self.dimensions)
        if self.primary is None or self.primary not in names:
            raise ValueError(
                f"primary: {self.primary!r} is not one of the dimensions ({', '.join(names)})"
            )
        for name in self.publish:
            if name not in names:
                raise ValueError(f"publish: {name!r} is not one of the dimensions")
            if name == self.primary:
                raise ValueError(f"publish: {name!r} is the primary dimension, published as reward")
            if name in RESERVED_NAMES:
                raise ValueError(f"publish: {name!r} is a key reward.json already has")
        return self

    def dimension(self, name: str) -> Dimension:
        """The dimension named ``name`` (``KeyError`` when there is none)."""
        for dimension in self.dimensions:
            if dimension.name == name:
                return dimension
        raise KeyError(name)

    def cases(self) -> set[str]:
        """Every case id a dimension names."""
        return {
            member.case
            for dimension in self.dimensions
            for member in dimension.members
            if member.case is not None
        }


def _check_graph(dimensions: Sequence[Dimension]) -> None:
    """Every dimension a member names exists, and no dimension contains
    itself (``ValueError`` naming the cycle)."""
    children: dict[str, list[str]] = {
        dimension.name: [m.dimension for m in dimension.members if m.dimension is not None]
        for dimension in dimensions
    }
    for name, inner in children.items():
        for child in inner:
            if child not in children:
                raise ValueError(f"dimension {name!r}: member {child!r} is not a dimension")
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in children:
        if start in state:
            continue
        # Iterative depth-first search: a hostile spec may nest a thousand deep.
        path = [start]
        state[start] = 1
        stack: list[Iterator[str]] = [iter(children[start])]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
                state[path.pop()] = 2
            elif state.get(step) == 1:
                cycle = " -> ".join([*path[path.index(step) :], step])
                raise ValueError(f"dimensions contain themselves: {cycle}")
            elif step not in state:
                path.append(step)
                state[step] = 1
                stack.append(iter(children[step]))


# --- the spec form ----------------------------------------------------------------------------

_SPEC = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False)


class DimensionSpec(BaseModel):
    """One ``[[scoring.dimensions]]`` table: ``name``, ``scheme``, its
    members (``cases``, declared case ids, and ``dimensions``, other
    dimensions' names), ``weights`` by member name (a case's default is its
    own ``weight``, a dimension's 1.0), ``optional`` members (a case's
    default is its own ``required``), ``threshold``, ``digits``."""

    model_config = _SPEC

    name: DimensionName
    scheme: SchemeName
    cases: Annotated[list[CaseId], Field(max_length=MAX_MEMBERS)] = Field(default_factory=list)
    dimensions: Annotated[list[DimensionName], Field(max_length=MAX_DIMENSIONS)] = Field(
        default_factory=list
    )
    weights: Annotated[dict[str, float], Field(max_length=MAX_MEMBERS)] = Field(
        default_factory=dict
    )
    optional: Annotated[list[str], Field(max_length=MAX_MEMBERS)] = Field(default_factory=list)
    threshold: float | None = None
    digits: Annotated[int | None, Field(ge=0, le=15)] = None


class ScoringSpec(BaseModel):
    """A task spec's ``scoring`` table: the task's ``scheme`` and flat
    ``threshold``, or ``dimensions`` with their ``primary`` (default
    ``reward``) and the dimensions to ``publish`` in ``reward.json``."""

    model_config = _SPEC

    scheme: SchemeName | None = None
    threshold: float | None = None
    primary: DimensionName | None = None
    publish: Annotated[list[DimensionName], Field(max_length=MAX_DIMENSIONS)] = Field(
        default_factory=list
    )
    dimensions: Annotated[list[DimensionSpec], Field(max_length=MAX_DIMENSIONS)] = Field(
        default_factory=list
    )


class Declared(Protocol):
    """A declared case as :func:`resolve` reads it (a task spec's case)."""

    @property
    def id(self) -> str: ...

    @property
    def weight(self) -> float | None: ...

    @property
    def required(self) -> bool | None: ...


def resolve(spec: ScoringSpec | None, cases: Iterable[Declared]) -> Scoring | None:
    """The resolved :class:`Scoring` of a task: ``spec`` (its ``scoring``
    table, or ``None``) over its declared ``cases`` (each with its own
    ``weight`` and ``required``, ``None`` when not given). ``None`` when the
    task declares no scoring at all. ``ValueError`` naming the field
    (``scoring.dimensions[1].cases[0]: ...``) when a name refers to nothing,
    a case is in no dimension, or the structure is invalid."""
    declared = list(cases)
    given = any(case.weight is not None or case.required is not None for case in declared)
    if spec is None and not given:
        return None
    spec = spec or ScoringSpec()
    if not spec.dimensions:
        if spec.primary is not None or spec.publish:
            raise ValueError("scoring: primary and publish name dimensions, and none is declared")
        return Scoring.model_validate(
            {
                "scheme": spec.scheme,
                "weights": {c.id: c.weight for c in declared if c.weight is not None},
                "optional": sorted({c.id for c in declared if c.required is False}),
                "threshold": spec.threshold,
            }
        )
    if spec.scheme is not None or spec.threshold is not None:
        raise ValueError(
            "scoring: with dimensions, each dimension names its scheme and threshold "
            "(scoring.scheme and scoring.threshold are for a task without dimensions)"
        )
    by_id = {case.id: case for case in declared}
    names = {item.name for item in spec.dimensions}
    placed: set[str] = set()
    dimensions = []
    for index, item in enumerate(spec.dimensions):
        where = f"scoring.dimensions[{index}]"
        members = []
        for position, case_id in enumerate(item.cases):
            case = by_id.get(case_id)
            if case is None:
                raise ValueError(f"{where}.cases[{position}]: {case_id!r} is not a declared case")
            placed.add(case_id)
            weight = item.weights.get(case_id, 1.0 if case.weight is None else case.weight)
            required = case_id not in item.optional and case.required is not False
            members.append({"case": case_id, "weight": weight, "required": required})
        for position, name in enumerate(item.dimensions):
            if name not in names:
                raise ValueError(f"{where}.dimensions[{position}]: {name!r} is not a dimension")
            members.append(
                {
                    "dimension": name,
                    "weight": item.weights.get(name, 1.0),
                    "required": name not in item.optional,
                }
            )
        named = {*item.cases, *item.dimensions}
        for key in (*item.weights, *item.optional):
            if key not in named:
                raise ValueError(f"{where}: {key!r} is weighed or optional but not a member")
        if not members:
            raise ValueError(f"{where}: a dimension has at least one case or dimension")
        dimensions.append(
            {
                "name": item.name,
                "scheme": item.scheme,
                "members": members,
                "threshold": item.threshold,
                "digits": item.digits,
            }
        )
    for case in declared:
        if case.id not in placed:
            raise ValueError(f"scoring: case {case.id!r} is in no dimension")
    if len(names) < len(spec.dimensions):
        raise ValueError("scoring.dimensions: two dimensions share a name")
    return Scoring.model_validate(
        {
            "dimensions": sorted(dimensions, key=lambda item: str(item["name"])),
            "primary": spec.primary or "reward",
            "publish": sorted(set(spec.publish)),
        }
    )
