"""Weighing: the value of a case, the inputs of a weighing scheme, and the
values of named reward dimensions.

A case's value is its score when its reader measured one, else 1.0 or 0.0
by its verdict; a score outside [0, 1] is refused, never clipped.
:func:`flat_members` weighs a task's cases without dimensions;
:func:`evaluate` gives every dimension's value (or ``None``) and the
refusals that make the run ungradable. docs/scoring.md gives the rules.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from ..codes.scores import SCORE_OUT_OF_RANGE
from ..record.cases import PASS, CaseResult
from ..record.refusal import Refusal, refusal
from ..record.scoring import Dimension, Scoring
from ..util.exceptions import UnknownName
from ..util.frozen import EMPTY
from .registry import Scheme, Weighed, get_scheme
from .rules import Tally, tally

__all__ = [
    "SCORE",
    "case_value",
    "evaluate",
    "flat_members",
    "flat_refusals",
    "in_range",
    "weighing_scheme",
]

#: The measure a reader writes a case's score under.
SCORE = "score"

#: The ids whose rows are ambiguous (more than one row), in :func:`_rows_by_id`.
_SHARED_ID = object()


def case_value(row: CaseResult) -> float:
    """A graded case's value: its measured score, else 1.0 / 0.0 by verdict."""
    measured = row.measures.get(SCORE)
    if measured is not None:
        return float(measured)
    return 1.0 if row.verdict == PASS else 0.0


def in_range(row: CaseResult) -> bool:
    """Whether the row's measured score (if any) lies in [0, 1]."""
    measured = row.measures.get(SCORE)
    return measured is None or 0.0 <= measured <= 1.0


def _out_of_range(row: CaseResult) -> Refusal:
    return refusal(
        SCORE_OUT_OF_RANGE,
        f"case {row.id} scored {row.measures[SCORE]!r}, outside [0, 1]: refused, never clipped",
        row.id,
    )


def flat_members(tally: Tally) -> list[Weighed]:
    """The inputs of a weighing scheme over a run without dimensions: every
    graded row, weighed as the task's flat scoring says (1.0 and required
    when it says nothing)."""
    scoring = tally.scoring
    weights = scoring.weights if scoring is not None else EMPTY
    optional = set(scoring.optional) if scoring is not None else set()
    return [
        Weighed(
            case_value(row), row.verdict == PASS, weights.get(row.id, 1.0), row.id not in optional
        )
        for row in tally.rows
        if row.graded
    ]


def weighing_scheme(
    name: str,
    description: str,
    combine: Callable[[Sequence[Weighed], float | None], float],
    *,
    bounds: tuple[float, float] | None = (0.0, 1.0),
    threshold: float | None = None,
    signed: bool = False,
    needs_weight: bool = False,
    needs_required: bool = False,
) -> Scheme:
    """A weighing :class:`Scheme` from its ``combine``: over a run without
    dimensions its reward is ``combine`` of :func:`flat_members`, with the
    task's threshold or the scheme's own. A scheme that divides by the sum
    of its weights (``needs_weight``) takes no negative weight."""
    if signed and needs_weight:
        raise ValueError(f"{name}: a scheme that divides by its weights' sum is not signed")

    def reward(counted: Tally) -> float:
        given = counted.scoring.threshold if counted.scoring is not None else None
        return combine(flat_members(counted), threshold if given is None else given)

    return Scheme(
        name=name,
        description=description,
        reward=reward,
        bounds=bounds,
        combine=combine,
        threshold=threshold,
        signed=signed,
        needs_weight=needs_weight,
        needs_required=needs_required,
    )


def _misfits(
    scheme: Scheme,
    weights: Sequence[float],
    required: Sequence[bool],
    threshold: float | None,
    *,
    inner: bool,
) -> str | None:
    """Why inputs with these ``weights`` and ``required`` flags (and
    ``threshold``; ``inner``: some input is a dimension) do not fit
    ``scheme``, or ``None``."""
    if scheme.combine is None:
        if inner:
            return f"{scheme.name} does not weigh, so it cannot fold other dimensions"
        if any(weight != 1.0 for weight in weights) or not all(required):
            return f"{scheme.name} does not weigh: give no weights or optional members"
        if threshold is not None:
            return f"{scheme.name} takes no threshold"
        return None
    if threshold is not None and scheme.threshold is None:
        return f"{scheme.name} takes no threshold"
    if not scheme.signed and any(weight < 0 for weight in weights):
        return f"a negative weight, which only weighted-sum/1 takes ({scheme.name} does not)"
    # Weights here are never negative (signed schemes do not divide by
    # their sum, weighing_scheme), so they sum to zero when none is positive;
    # summing them could overflow (two weights of 1e308).
    if scheme.needs_weight and not any(weight > 0 for weight in weights):
        return f"the weights sum to zero, and {scheme.name} divides by their sum"
    if scheme.needs_required and not any(required):
        return f"{scheme.name} with no required member"
    return None


def flat_refusals(
    rows: Sequence[CaseResult], scoring: Scoring | None, scheme: Scheme
) -> list[Refusal]:
    """What a weighing ``scheme`` refuses in a run without dimensions:
    graded cases scored outside [0, 1], and weights or required flags that
    do not fit it. A scheme that does not weigh refuses nothing here (the
    task's weights are then not read: the caller chose that scheme)."""
    if scheme.combine is None:
        return []
    found = [_out_of_range(row) for row in rows if row.graded and not in_range(row)]
    weights = scoring.weights if scoring is not None else EMPTY
    optional = set(scoring.optional) if scoring is not None else set()
    graded = [row.id for row in rows if row.graded]
    if graded:
        why = _misfits(
            scheme,
            [weights.get(case_id, 1.0) for case_id in graded],
            [case_id not in optional for case_id in graded],
            None,
            inner=False,
        )
        if why is not None:
            found.append(refusal("CASE_INVALID", f"the task's weights: {why}"))
    return found


def _rows_by_id(rows: Sequence[CaseResult]) -> dict[str, object]:
    found: dict[str, object] = {}
    for row in rows:
        found[row.id] = _SHARED_ID if row.id in found else row
    return found


def _order(dimensions: Sequence[Dimension]) -> list[Dimension]:
    """``dimensions`` with each after the dimensions it holds (the scoring
    is acyclic: :class:`~truereward.record.scoring.Scoring` checks it)."""
    by_name = {dimension.name: dimension for dimension in dimensions}
    placed: set[str] = set()
    ordered: list[Dimension] = []
    for start in dimensions:
        stack = [(start, False)]
        while stack:
            dimension, expanded = stack.pop()
            if dimension.name in placed:
                continue
            if expanded:
                placed.add(dimension.name)
                ordered.append(dimension)
                continue
            stack.append((dimension, True))
            for member in dimension.members:
                if member.dimension is not None and member.dimension not in placed:
                    stack.append((by_name[member.dimension], False))
    return ordered


def _lookup(name: str) -> Scheme | None:
    try:
        return get_scheme(name)
    except UnknownName:
        return None


def evaluate(
    rows: Sequence[CaseResult], scoring: Scoring, *, declared: bool
) -> tuple[dict[str, float | None], list[Refusal]]:
    """Every dimension's value (``None`` when it has none) and the refusals
    of the dimensions (module docstring). ``declared``: the fold has a case
    set, whose own rules say what is missing or outside it."""
    found: list[Refusal] = []
    by_id = _rows_by_id(rows)
    values: dict[str, float | None] = {}
    out_of_range: set[str] = set()
    for dimension in _order(scoring.dimensions):
        where = f"dimension {dimension.name}"
        scheme = _lookup(dimension.scheme)
        if scheme is None:
            found.append(refusal("CASE_INVALID", f"{where}: unknown scheme {dimension.scheme!r}"))
            values[dimension.name] = None
            continue
        why = _misfits(
            scheme,
            [member.weight for member in dimension.members],
            [member.required for member in dimension.members],
            dimension.threshold,
            inner=any(member.dimension is not None for member in dimension.members),
        )
        if why is not None:
            found.append(refusal("CASE_INVALID", f"{where}: {why}"))
            values[dimension.name] = None
            continue
        value, why = _value(dimension, scheme, by_id, values, out_of_range)
        if why is not None:
            found.append(refusal("CASE_INVALID", f"{where}: {why}"))
        values[dimension.name] = value
    for case_id in sorted(out_of_range):
        row = by_id[case_id]
        assert isinstance(row, CaseResult)
        found.append(_out_of_range(row))
    if not declared:
        named = scoring.cases()
        found += [
            refusal(
                "CASES_MISSING", f"case {case_id}, which a dimension holds, has no result", case_id
            )
            for case_id in sorted(named - by_id.keys())
        ]
        found += [
            refusal(
                "CASE_INVALID",
                f"a result names case {case_id}, which no dimension holds",
                case_id,
            )
            for case_id in sorted(by_id.keys() - named)
        ]
    return values, found


def _value(
    dimension: Dimension,
    scheme: Scheme,
    by_id: Mapping[str, object],
    values: Mapping[str, float | None],
    out_of_range: set[str],
) -> tuple[float | None, str | None]:
    """The value of one dimension whose declaration fits its scheme, its
    inner dimensions already valued: ``None`` when something under it has
    no value (then a refusal elsewhere says why), or with a reason when its
    scheme gives no reward for these cases. Cases a weighing dimension
    finds out of range go to ``out_of_range``."""
    weighed: list[Weighed] = []
    cases: list[CaseResult] = []
    missing = False
    for member in dimension.members:
        if member.dimension is not None:
            value = values.get(member.dimension)
            if value is None:
                missing = True
                continue
            weighed.append(Weighed(value, value >= 1.0, member.weight, member.required))
            continue
        row = by_id.get(str(member.case))
        if not isinstance(row, CaseResult) or not row.graded:
            missing = True
            continue
        if scheme.combine is not None and not in_range(row):
            out_of_range.add(row.id)
            missing = True
            continue
        cases.append(row)
        weighed.append(
            Weighed(case_value(row), row.verdict == PASS, member.weight, member.required)
        )
    if missing:
        return None, None
    if scheme.combine is not None:
        threshold = dimension.threshold if dimension.threshold is not None else scheme.threshold
        value = scheme.combine(weighed, threshold)
    else:
        counted = tally(cases, None, (), ())
        if counted.refusals:
            codes = ", ".join(sorted({item.code for item in counted.refusals}))
            return None, f"its cases give {scheme.name} no reward ({codes})"
        value = scheme.reward(counted)
    if not math.isfinite(value):
        return None, f"{scheme.name} gave {value!r}, not a finite number"
    return (round(value, dimension.digits) if dimension.digits is not None else value), None
