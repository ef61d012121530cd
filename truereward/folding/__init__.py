"""The fold: the rows of one run, one reward or the reasons there is none.

``fold(rows, *, case_set=None, checks=(), refusals=(), scheme="gated-binary/1")``
validates the rows, applies the shared refusal rules
(:mod:`truereward.folding.rules`) and, when nothing refuses the run, asks the
named scheme (:mod:`truereward.folding.registry`) for the reward. It is pure:
the same inputs in any order give the same :class:`Fold`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import TypeAdapter

from ..cases import CaseResult, CheckAnswer
from ..caseset import DeclaredCases, declared_cases
from ..codes import Ungradable
from ..refusal import Refusal, from_ungradable, refusal, sort_key
from .model import CaseCounts, FailedIds, Fold, FoldInputs, KindCounts, RunCheck
from .registry import Scheme, UnknownScheme, get_scheme, register, scheme_names
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
    "UnknownScheme",
    "as_refusals",
    "fold",
    "fold_fields",
    "fold_prepared",
    "get_scheme",
    "prepare_inputs",
    "register",
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
    declaration; an unknown code raises :class:`~truereward.codes.UnknownCode`)."""
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
) -> FoldInputs:
    """Normalise what a fold takes besides the rows (see :func:`fold`):
    invalid declarations of the case set become ``CASE_INVALID`` refusals, and
    refusals and check answers are sorted so their order never matters."""
    given = as_refusals(refusals)
    kinds = None
    if case_set is not None:
        declared = declared_cases(case_set)
        kinds = declared.kinds
        given = list(declared.refusals) + given
    answers = _ANSWERS.validate_python(list(checks)) if checks else []
    if kinds is None and not given and not answers:
        return _NO_INPUTS  # the usual case: shared, as it is immutable
    return FoldInputs.model_validate(
        {
            "case_set": kinds,
            "refusals": sorted(given, key=sort_key) if given else (),
            "checks": sorted(answers, key=_answer_order) if answers else (),
        }
    )


#: The inputs of a fold with nothing beside its rows.
_NO_INPUTS = FoldInputs()


def fold_fields(rows: list[CaseResult], inputs: FoldInputs, scheme: str | Scheme) -> dict[str, Any]:
    """The fields of the :class:`Fold` of validated rows with prepared inputs,
    as a dict (the grade document takes them without building a Fold)."""
    chosen = scheme if isinstance(scheme, Scheme) else get_scheme(scheme)
    declared = None if inputs.case_set is None else DeclaredCases(kinds=inputs.case_set)
    counted = tally(rows, declared, inputs.checks, inputs.refusals)
    return {
        "scheme": chosen.name,
        "gradable": counted.gradable,
        "reward": chosen.reward(counted) if counted.gradable else None,
        "guards_hold": counted.guards_hold,
        "fix_rate": counted.fix_rate,
        "case_fraction": counted.case_fraction,
        "cases": counted.cases,
        "failed": counted.failed,
        "refusals": counted.refusals,
        "checks": counted.checks,
        "flaky": counted.flaky,
    }


def fold_prepared(rows: list[CaseResult], inputs: FoldInputs, scheme: str | Scheme) -> Fold:
    """Fold validated rows with prepared inputs (see :func:`fold`)."""
    return Fold.model_validate(fold_fields(rows, inputs, scheme))


def fold(
    rows: Iterable[CaseResult | Mapping[str, Any]],
    *,
    case_set: object = None,
    checks: Iterable[CheckAnswer | Mapping[str, Any]] = (),
    refusals: Iterable[Refusal | Ungradable | Mapping[str, Any]] = (),
    scheme: str | Scheme = DEFAULT_SCHEME,
) -> Fold:
    """Fold the rows of one run into its reward, or the reasons there is none.

    ``rows`` are :class:`CaseResult` objects or row dicts (validated; an
    invalid row raises ``pydantic.ValidationError`` naming its index and
    field). ``case_set`` is the declared cases (``{id: kind}``, a list of
    ``{id, kind}``, or a task spec); invalid declarations become
    ``CASE_INVALID`` refusals. ``checks`` are run-check answers given beside
    the rows' own; ``refusals`` are reasons found outside the rows (a reader
    that refused the evidence, a test session that stopped early). An unknown
    scheme raises :class:`UnknownScheme`.

    The result is gradable exactly when there is no refusal; then ``reward``
    is the scheme's float, otherwise ``None``.
    """
    chosen = scheme if isinstance(scheme, Scheme) else get_scheme(scheme)
    inputs = prepare_inputs(case_set=case_set, checks=checks, refusals=refusals)
    return fold_prepared(validate_rows(rows), inputs, chosen)
