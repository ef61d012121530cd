"""Reading one run's ``grade.json`` bytes into a :class:`RunRecord`.

**view** (default) validates strictly only the fields a sweep analysis uses
(pydantic's JSON parser; duplicate keys not detected); **strict** reads the
whole :class:`~truereward.GradeDocument` (strict JSON, the full schema) and
folds its ``detail`` again, as ``truereward verify`` does, several times
slower (``infra/bench/sweep_summary.py``). Either way the stored outcome
must be consistent (gradable exactly when unrefused, a finite reward
exactly when gradable, within its scheme's bounds); anything else is an
``unreadable`` record saying why. docs/sweeps.md.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..grade.versions import SchemaVersion
from ..record.validation import describe
from ..util.strictjson import StrictJSONError
from .record import RunRecord

__all__ = ["parse_grade"]

_VIEW = ConfigDict(frozen=True, strict=True, extra="ignore", allow_inf_nan=False)


class _RefusalView(BaseModel):
    model_config = _VIEW

    code: Annotated[str, Field(min_length=1)]
    blame: Literal["run", "grader"]
    why: str = ""


class _AttemptView(BaseModel):
    model_config = _VIEW

    attempt: Annotated[int, Field(ge=1)]
    gradable: bool
    refusals: list[_RefusalView] = Field(default_factory=list)


class _RunView(BaseModel):
    model_config = _VIEW

    attempt: Annotated[int, Field(ge=1)] = 1


class _RowView(BaseModel):
    model_config = _VIEW

    id: str
    verdict: Literal["pass", "fail", "ungradable"]


class _GradeView(BaseModel):
    model_config = _VIEW

    schema_version: SchemaVersion
    scheme: str
    gradable: bool
    reward: float | None
    refusals: list[_RefusalView]
    run: _RunView | None = None
    attempts: list[_AttemptView] = Field(default_factory=list)


class _GradeViewWithCases(_GradeView):
    detail: list[_RowView]


def _consistency(gradable: bool, reward: float | None, refusals: int) -> str | None:
    if gradable and refusals:
        return "gradable is true but there are refusals"
    if not gradable and not refusals:
        return "gradable is false but there is no refusal"
    if gradable and reward is None:
        return "gradable is true but reward is null"
    if not gradable and reward is not None:
        return f"an ungradable grade carries a reward ({reward!r})"
    return None


def parse_grade(
    data: bytes, run: str, *, strict: bool = False, with_cases: bool = False
) -> RunRecord:
    """The record of run ``run`` from its ``grade.json`` bytes; an
    ``unreadable`` record (with the reason, naming the field) when the bytes
    are not a consistent grade document. Never raises for bad input."""
    if strict:
        return _parse_strict(data, run, with_cases=with_cases)
    model = _GradeViewWithCases if with_cases else _GradeView
    try:
        view = model.model_validate_json(data)
    except ValidationError as error:
        invalid = describe(error, limit=1, whole="(document)")
        return RunRecord.unreadable(run, f"grade.json: {invalid}")
    problem = _consistency(view.gradable, view.reward, len(view.refusals)) or _in_bounds(
        view.scheme, view.reward
    )
    if problem:
        return RunRecord.unreadable(run, f"grade.json: {problem}")
    return RunRecord.from_grade(view, run, with_cases=with_cases)


def _parse_strict(data: bytes, run: str, *, with_cases: bool) -> RunRecord:
    from ..grade.document import GradeDocument

    try:
        document = GradeDocument.from_bytes(data)
    except StrictJSONError as error:
        return RunRecord.unreadable(run, f"grade.json: {error}")
    except ValidationError as error:
        invalid = describe(error, limit=1, whole="(document)")
        return RunRecord.unreadable(run, f"grade.json: {invalid}")
    problem = _consistency(document.gradable, document.reward, len(document.refusals))
    if problem:
        return RunRecord.unreadable(run, f"grade.json: {problem}")
    from ..grade.readback import Unreadable, verify_document

    try:
        disagreements = verify_document(document)
    except Unreadable as error:
        return RunRecord.unreadable(run, f"grade.json: {error}")
    if disagreements:
        listed = "; ".join(str(item) for item in disagreements[:3])
        return RunRecord.unreadable(
            run, f"grade.json: disagrees with a fold of its detail: {listed}"
        )
    return RunRecord.from_document(document, run, with_cases=with_cases)


_BOUNDS: dict[str, tuple[float, float] | None] = {}


def _in_bounds(scheme: str, reward: float | None) -> str | None:
    if reward is None:
        return None
    try:
        bounds = _BOUNDS[scheme]
    except KeyError:
        from ..folding import get_scheme
        from ..util.exceptions import UnknownName

        try:
            bounds = _BOUNDS[scheme] = get_scheme(scheme).bounds
        except UnknownName:  # not cached: it may be registered later
            return None
    if bounds is not None and not bounds[0] <= reward <= bounds[1]:
        return f"reward {reward!r} is outside what {scheme} gives ({bounds[0]} to {bounds[1]})"
    return None
