"""The fold: the rows of one run, one reward or the reasons there is none.

:func:`fold` validates the rows, applies the shared refusal rules
(:mod:`.rules`) and, when nothing refuses, asks the scheme for the reward; a
task's declared scoring is read by the weighing schemes and gives named
dimensions their values (:mod:`.weighing`). Pure: the same inputs in any
order give the same :class:`Fold`. The scheme is the one named, else the
primary dimension's, else the task's, else :data:`DEFAULT_SCHEME`; another
scheme than the primary dimension's is ``CASE_INVALID``. docs/design.md,
README.md ("The rules of the fold") and docs/scoring.md.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import TypeAdapter

from ..codes import Ungradable
from ..record.cases import CaseResult, CheckAnswer
from ..record.caseset import DeclaredCases, declared_cases
from ..record.refusal import Refusal, from_ungradable, refusal, sort_key
from ..record.scoring import Scoring
from ..util.exceptions import UnknownName
from .model import CaseCounts, FailedIds, Fold, FoldInputs, KindCounts, RunCheck
from .registry import Scheme, get_scheme, register, scheme_names
from .rules import Tally, tally

__all__ = [
    "DEFAULT_SCHEME",
    "CaseCounts",
    "FailedIds",
    "Fold",
    "FoldInputs",
    "KindCounts",
    "RunCheck",
    "Scheme",
    "Tally",
    "as_refusals",
    "fold",
    "fold_fields",
    "fold_prepared",
    "get_scheme",
    "prepare_inputs",
    "register",
    "scheme_for",
    "scheme_names",
    "validate_rows",
]

#: The scheme used when none is named.
DEFAULT_SCHEME = "gated-binary/1"

_ROWS: TypeAdapter[list[CaseResult]] = TypeAdapter(list[CaseResult])
_ANSWERS: TypeAdapter[list[CheckAnswer]] = TypeAdapter(list[CheckAnswer])


def validate_rows(rows: Iterable[CaseResult | Mapping[str, Any]]) -> list[CaseResult]:
    """Rows as :class:`CaseResult` objects. Raises ``pydantic.ValidationError``
    whose locations are (row index, field) for any invalid row."""
    return _ROWS.validate_python(rows if isinstance(rows, list) else list(rows))


def as_refusals(items: Iterable[Refusal | Ungradable | Mapping[str, Any]]) -> list[Refusal]:
    """Refusals from :class:`Refusal` objects, :class:`Ungradable` errors or
    mappings ``{code, why, case?}`` (``blame`` comes from the code's
    declaration; an unknown code raises :class:`~truereward.util.exceptions.UnknownName`)."""
    out: list[Refusal] = []
    for item in items:
        if isinstance(item, Refusal):
            out.append(item)
        elif isinstance(item, Ungradable):
            out.append(from_ungradable(item))
        elif isinstance(item, Mapping):
            out.append(refusal(str(item.get("code")), str(item.get("why", "")), item.get("case")))
        else:
            raise TypeError(f"a refusal is a Refusal, an Ungradable or a mapping, got {item!r}")
    return out


def _answer_order(answer: CheckAnswer) -> tuple[str, bool, str]:
    return (answer.check, answer.holds, answer.why)


def prepare_inputs(
    *,
    case_set: object = None,
    checks: Iterable[CheckAnswer | Mapping[str, Any]] = (),
    refusals: Iterable[Refusal | Ungradable | Mapping[str, Any]] = (),
    scoring: Scoring | Mapping[str, Any] | None = None,
) -> FoldInputs:
    """Normalise what a fold takes besides the rows (see :func:`fold`):
    invalid declarations of the case set become ``CASE_INVALID`` refusals, and
    refusals and check answers are sorted so their order never matters.
    ``scoring`` (a :class:`~truereward.record.scoring.Scoring` or its mapping) is
    the task's; when it is ``None``, a case set that is a task spec brings
    its own (``resolved_scoring``)."""
    given = as_refusals(refusals)
    kinds = None
    if isinstance(case_set, Mapping) and "cases" in case_set:
        case_set, given = _as_spec(case_set, given)
    if case_set is not None:
        declared = declared_cases(case_set)
        kinds = declared.kinds
        given = list(declared.refusals) + given
    if scoring is None:
        scoring = getattr(case_set, "resolved_scoring", None)
    elif not isinstance(scoring, Scoring):
        scoring = Scoring.model_validate(scoring)
    answers = _ANSWERS.validate_python(list(checks)) if checks else []
    if kinds is None and not given and not answers and scoring is None:
        return _NO_INPUTS  # the usual case: shared, as it is immutable
    return FoldInputs.model_validate(
        {
            "case_set": kinds,
            "refusals": sorted(given, key=sort_key) if given else (),
            "checks": sorted(answers, key=_answer_order) if answers else (),
            "scoring": scoring,
        }
    )


def _as_spec(value: Mapping[str, Any], given: list[Refusal]) -> tuple[object, list[Refusal]]:
    """A mapping with ``cases`` is a task spec (its scoring comes with it);
    one that is not valid is refused (``CASE_INVALID``), never raised."""
    from ..record.taskspec import TaskSpec, TaskSpecError

    try:
        return TaskSpec.of(value), given
    except TaskSpecError as error:
        return None, [*given, refusal("CASE_INVALID", f"the task spec is not valid: {error}")]


#: The inputs of a fold with nothing beside its rows.
_NO_INPUTS = FoldInputs()


def scheme_for(scheme: str | Scheme | None, scoring: Scoring | None) -> Scheme:
    """The scheme a fold uses (module docstring): ``scheme`` when named
    (:class:`~truereward.util.exceptions.UnknownName` when nobody registered it), else the task's
    (its primary dimension's, or its own), else :data:`DEFAULT_SCHEME`. A
    scheme the task names and nobody registered gives the default here; the
    fold refuses the run for it (``CASE_INVALID``)."""
    if isinstance(scheme, Scheme):
        return scheme
    if scheme is not None:
        return get_scheme(scheme)
    name = DEFAULT_SCHEME
    if scoring is not None and scoring.dimensions and scoring.primary is not None:
        name = scoring.dimension(scoring.primary).scheme
    elif scoring is not None and scoring.scheme is not None:
        name = scoring.scheme
    try:
        return get_scheme(name)
    except UnknownName:
        return get_scheme(DEFAULT_SCHEME)


def _scoring_refusals(
    rows: list[CaseResult], scoring: Scoring | None, chosen: Scheme, declared: bool
) -> tuple[list[Refusal], dict[str, float | None]]:
    """What the task's scoring refuses under ``chosen``, and its dimensions'
    values (:mod:`truereward.folding.weighing`)."""
    from .weighing import evaluate, flat_refusals

    if scoring is None or not scoring.dimensions:
        found = flat_refusals(rows, scoring, chosen)
        if scoring is not None and scoring.scheme is not None:
            try:
                get_scheme(scoring.scheme)
            except UnknownName:
                found.append(
                    refusal(
                        "CASE_INVALID", f"the task names scheme {scoring.scheme!r}, unknown here"
                    )
                )
        return found, {}
    values, found = evaluate(rows, scoring, declared=declared)
    primary = str(scoring.primary)
    wanted = scoring.dimension(primary).scheme
    if chosen.name != wanted:
        found.append(
            refusal(
                "CASE_INVALID",
                f"the task's reward is its dimension {primary}, folded with {wanted}; "
                f"it is not folded with {chosen.name}",
            )
        )
    return found, values


def fold_fields(
    rows: list[CaseResult], inputs: FoldInputs, scheme: str | Scheme | None
) -> dict[str, Any]:
    """The fields of the :class:`Fold` of validated rows with prepared inputs,
    as a dict (the grade document takes them without building a Fold)."""
    scoring = inputs.scoring
    chosen = scheme_for(scheme, scoring)
    declared = None if inputs.case_set is None else DeclaredCases(kinds=inputs.case_set)
    counted = tally(rows, declared, inputs.checks, inputs.refusals)
    values: dict[str, float | None] = {}
    if scoring is not None or chosen.combine is not None:
        extra, values = _scoring_refusals(rows, scoring, chosen, declared is not None)
        refusals = counted.refusals
        if extra:
            refusals = sorted([*refusals, *extra], key=sort_key)
        counted = dataclasses.replace(counted, refusals=refusals, scoring=scoring)
    reward = None
    if counted.gradable and values:
        reward = values[str(scoring.primary if scoring is not None else "")]
        if reward is None:  # every dimension without a value has a refusal saying why
            raise AssertionError("a gradable fold with dimensions has its primary's value")
    elif counted.gradable:
        reward = chosen.reward(counted)
        if not math.isfinite(reward):  # weighted-sum/1 past the float range: no reward
            why = f"{chosen.name} gave {reward!r}, not a finite number"
            counted = dataclasses.replace(counted, refusals=[refusal("CASE_INVALID", why)])
            reward = None
    return {
        "scheme": chosen.name,
        "gradable": counted.gradable,
        "reward": reward,
        "guards_hold": counted.guards_hold,
        "fix_rate": counted.fix_rate,
        "case_fraction": counted.case_fraction,
        "cases": counted.cases,
        "failed": counted.failed,
        "refusals": counted.refusals,
        "checks": counted.checks,
        "flaky": counted.flaky,
        "dimensions": dict(sorted(values.items())),
    }


def fold_prepared(
    rows: list[CaseResult], inputs: FoldInputs, scheme: str | Scheme | None = None
) -> Fold:
    """Fold validated rows with prepared inputs (see :func:`fold`)."""
    return Fold.model_validate(fold_fields(rows, inputs, scheme))


def fold(
    rows: Iterable[CaseResult | Mapping[str, Any]],
    *,
    case_set: object = None,
    checks: Iterable[CheckAnswer | Mapping[str, Any]] = (),
    refusals: Iterable[Refusal | Ungradable | Mapping[str, Any]] = (),
    scheme: str | Scheme | None = None,
    scoring: Scoring | Mapping[str, Any] | None = None,
) -> Fold:
    """Fold the rows of one run into its reward, or the reasons there is none.

    ``rows`` are :class:`CaseResult` objects or row dicts (validated; an
    invalid row raises ``pydantic.ValidationError`` naming its index and
    field). ``case_set`` is the declared cases (``{id: kind}``, a list of
    ``{id, kind}``, or a task spec, or its mapping with ``cases``); invalid
    declarations become ``CASE_INVALID`` refusals. ``checks`` are run-check answers given beside
    the rows' own; ``refusals`` are reasons found outside the rows (a reader
    that refused the evidence, a test session that stopped early).
    ``scheme``: see the module docstring; an unknown one named here raises
    :class:`~truereward.util.exceptions.UnknownName`. ``scoring``: the task's declared scoring
    (default: the task spec's, when ``case_set`` is one).

    The result is gradable exactly when there is no refusal; then ``reward``
    is the scheme's float (or the primary dimension's value), otherwise
    ``None``.
    """
    inputs = prepare_inputs(case_set=case_set, checks=checks, refusals=refusals, scoring=scoring)
    chosen = scheme_for(scheme, inputs.scoring)
    return fold_prepared(validate_rows(rows), inputs, chosen)
