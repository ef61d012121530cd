"""The record every kind of evidence reduces to: the result of one case.

A reader answers with one :class:`CaseResult` per case, and everything
after it (the fold, the document, the published files) reads this record
alone. It is strict (no coercion, no unknown field, no NaN), immutable all
the way down, and carried as plain JSON with the ten keys of truereward
0.4.0's rows (``report`` and ``reruns`` only when present). docs/design.md,
"Immutable records", and README.md, "File formats", describe it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
)

from .. import codes
from ..util.frozen import EMPTY, FrozenJsonObject, FrozenMap, Items, is_absent, is_empty

__all__ = [
    "CASE_ID_PATTERN",
    "CASE_ID_RULE",
    "FAIL",
    "FAIL_TO_PASS",
    "KINDS",
    "MAX_CASES",
    "MAX_CASE_SET_BYTES",
    "PASS",
    "PASS_TO_PASS",
    "UNGRADABLE",
    "VERDICTS",
    "CaseId",
    "CaseResult",
    "CheckAnswer",
    "Kind",
    "Observation",
    "Rerun",
    "RerunVerdict",
    "Verdict",
    "case_set_problem",
    "check_case_id",
]

#: Behaviour the change must produce (SWE-bench's FAIL_TO_PASS).
FAIL_TO_PASS = "fail_to_pass"
#: Behaviour the change must not break: a guard (SWE-bench's PASS_TO_PASS).
PASS_TO_PASS = "pass_to_pass"
KINDS = (FAIL_TO_PASS, PASS_TO_PASS)

PASS = "pass"
FAIL = "fail"
#: Nothing was measured; ``code`` says why.
UNGRADABLE = "ungradable"
VERDICTS = (PASS, FAIL, UNGRADABLE)

Kind = Literal["fail_to_pass", "pass_to_pass"]
Verdict = Literal["pass", "fail", "ungradable"]
#: A rerun's outcome: it ran, so it passed or failed.
RerunVerdict = Literal["pass", "fail"]

#: The most cases a case set may declare, and the most rows graded for one
#: run: a task spec, case set or rows file over it is refused for its run.
#: Above the longest test lists of SWE-bench instances, and low enough that
#: grading a maximal case set stays within the documented time and memory,
#: its grade.json under what ``truereward verify`` reads (docs/hostile.md,
#: "Bounds").
MAX_CASES = 10_000
#: The most bytes (UTF-8) the ids of one case set take together: 10,000 ids
#: of 512 ASCII characters fit; ids of 512 four-byte characters fit some
#: 4,000 times. An id appears several times in a grade (its row, the case
#: set, the failed lists, refusals), so this bounds the grade's size too.
MAX_CASE_SET_BYTES = 8 << 20

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def case_set_problem(ids: Iterable[object], count: int) -> str:
    """Why a case set of ``count`` declarations whose ids are ``ids`` (the
    ones that are strings are counted) is too large to grade, or ``""``:
    more than :data:`MAX_CASES` cases, or ids over :data:`MAX_CASE_SET_BYTES`
    bytes in all."""
    if count > MAX_CASES:
        return f"declares {count} cases, more than the {MAX_CASES} a case set may have"
    size = sum(len(item.encode("utf-8", "surrogatepass")) for item in ids if isinstance(item, str))
    if size > MAX_CASE_SET_BYTES:
        return (
            f"has case ids of {size} bytes in all, more than the {MAX_CASE_SET_BYTES} bytes "
            "the ids of a case set may take"
        )
    return ""


def check_case_id(value: str) -> str:
    """Validate a case id: 1 to 512 characters, no leading or trailing
    whitespace, no control characters (C0, DEL, C1). Returns it unchanged."""
    if not value:
        raise ValueError("a case id must not be empty")
    if len(value) > 512:
        raise ValueError(f"a case id has at most 512 characters, got {len(value)}")
    if value.strip() != value:
        raise ValueError("a case id must not start or end with whitespace")
    if _CONTROL.search(value):
        raise ValueError("a case id must not contain control characters")
    return value


#: :func:`check_case_id` as a regular expression. Pydantic checks it in Rust
#: (a Python validator per row cost more than the rest of the fold); the
#: command line turns its mismatch error back into a sentence (CASE_ID_RULE).
CASE_ID_PATTERN = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"

#: What an id must be, in words.
CASE_ID_RULE = (
    "a case id has 1 to 512 characters, no leading or trailing whitespace and no control characters"
)

CaseId = Annotated[str, StringConstraints(min_length=1, max_length=512, pattern=CASE_ID_PATTERN)]

_STRICT = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False)


class Observation(BaseModel):
    """One thing the reader looked at, in the reader's own words. Free text:
    it never enters the reward."""

    model_config = _STRICT

    name: str
    verdict: str
    why: str = ""


def _known_run_check(value: str) -> str:
    if value not in codes.RUN_CHECKS:
        raise ValueError(
            f"unknown run check {value!r}; known checks: {', '.join(sorted(codes.RUN_CHECKS))}"
        )
    return value


class CheckAnswer(BaseModel):
    """One case's answer to a run check (see :data:`truereward.codes.RUN_CHECKS`):
    whether it held, and why not when it did not. The run holds a check only
    when every answer to it holds."""

    model_config = _STRICT

    check: Annotated[str, AfterValidator(_known_run_check)]
    holds: bool
    why: str = ""


class Rerun(BaseModel):
    """An earlier execution of a case's test in the same session: whether it
    passed, and why not. Reruns never enter the reward: the row is the last
    execution's."""

    model_config = _STRICT

    verdict: RerunVerdict
    why: str = ""


def _as_data(value: Any) -> Any:
    """An evaluation report given as its model is kept as its JSON form
    (duck-typed: the record does not import the evaluation model)."""
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else value


#: The rule "a code exactly when ungradable" in JSON Schema terms.
_CODE_RULE: dict[str, Any] = {
    "if": {"properties": {"verdict": {"const": "ungradable"}}, "required": ["verdict"]},
    "then": {"properties": {"code": {"minLength": 1}}, "required": ["code"]},
    "else": {"properties": {"code": {"const": ""}}},
}


class CaseResult(BaseModel):
    """One graded case.

    ``verdict`` is ``pass``, ``fail`` or ``ungradable``; ``code`` is non-empty
    and a known refusal code exactly when the verdict is ``ungradable`` (the
    code's blame and retry default come from :mod:`truereward.codes`).
    ``observations``, ``measures`` and ``containment`` describe what the reader
    saw and measured; they never enter the reward. ``checks`` are this case's
    answers to run checks. ``duration_s`` is the time spent grading the case.
    ``report`` is the evaluation report a reader or check attached, as data:
    any JSON object (an ``EvaluationReport`` given as a model is stored as its
    JSON form; its shape is checked where it is read as a report, not here).
    It never enters the reward, and a row without one has only the ten keys.
    ``reruns`` are the earlier executions of the case's test, oldest first
    (the row is the last one); a passing row with a failed rerun is flaky.
    """

    model_config = ConfigDict(
        frozen=True,
        strict=True,
        extra="forbid",
        allow_inf_nan=False,
        json_schema_extra=_CODE_RULE,
    )

    id: CaseId
    kind: Kind
    verdict: Verdict
    # Validated when defaulted too: an ungradable row without a code is refused.
    code: Annotated[str, Field(validate_default=True)] = ""
    why: str = ""
    observations: Items[Observation] = ()
    measures: FrozenMap[str, float] = EMPTY
    checks: Items[CheckAnswer] = ()
    containment: FrozenJsonObject | None = None
    duration_s: Annotated[float, Field(ge=0)] = 0.0
    # Left out of a dump when absent (in pydantic's serializer, not a Python
    # wrap of it, which doubled the cost of dumping a row), so rows without
    # a report or reruns keep the ten keys of the 0.4.0 row, byte for byte.
    report: Annotated[
        FrozenJsonObject | None, BeforeValidator(_as_data), Field(exclude_if=is_absent)
    ] = None
    reruns: Annotated[Items[Rerun], Field(exclude_if=is_empty)] = ()

    @field_validator("code", mode="after")
    @classmethod
    def _code_goes_with_ungradable(cls, code: str, info: ValidationInfo) -> str:
        # A field validator, not a model one: pydantic runs it on input
        # only, never again on an instance handed back to validation (a
        # grade document's detail, rows already validated), which an
        # "after" model validator would be, once per row every time.
        if "verdict" not in info.data:
            return code  # the verdict is invalid, and reported
        verdict = info.data["verdict"]
        if verdict == UNGRADABLE:
            if not code:
                raise ValueError("an ungradable case needs a refusal code")
            codes.lookup(code)  # UnknownName, a ValueError naming the known codes
        elif code:
            raise ValueError(
                f"only an ungradable case carries a code (verdict is {verdict!r}, code is {code!r})"
            )
        return code

    @property
    def flaky(self) -> bool:
        """True when the case passed after a failed execution (a rerun)."""
        return self.verdict == PASS and any(item.verdict == FAIL for item in self.reruns)

    @property
    def graded(self) -> bool:
        """True when the case passed or failed (something was measured)."""
        return self.verdict != UNGRADABLE

    def to_row(self) -> dict[str, Any]:
        """The record as a plain JSON-ready dict with the ten row keys, and
        ``report`` and ``reruns`` when there are any."""
        return self.model_dump(mode="json")

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> CaseResult:
        """The record a row carries; ``pydantic.ValidationError`` naming the
        field when the row is not a valid record."""
        return cls.model_validate(row)
