"""A task's specification: its declared cases, and how its evidence is read.

A :class:`TaskSpec` holds the case set and, optionally, the reader, the
evidence's place in a run, the reader's options and the task's scoring; it
loads from JSON, TOML or a SWE-bench instance, strictly (errors name the
field) and within bounds, since a spec may come from an untrusted run.
docs/readers.md, "Task specs", and docs/hostile.md, "Task specs", give the
shapes and the bounds.
"""

from __future__ import annotations

import functools
import reprlib
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, PrivateAttr, model_validator

from ..util.exceptions import TruerewardError
from ..util.strictjson import MAX_DEPTH, StrictJSONError, check_depth, loads
from .cases import CaseId, Kind, case_set_problem
from .scoring import Scoring, ScoringSpec, resolve

__all__ = ["MAX_SPEC_BYTES", "CaseSpec", "TaskSpec", "TaskSpecError"]

#: The largest task spec read: a maximal case set (10,000 ids of up to 512
#: characters) takes a third of it, and parsing this much TOML, the slowest
#: format, takes seconds (docs/hostile.md, "Bounds").
MAX_SPEC_BYTES = 16 << 20


class TaskSpecError(TruerewardError, ValueError):
    """A task spec that cannot be loaded; the message names the file and field."""


class CaseSpec(BaseModel):
    """One declared case: its id, its kind, and options for the reader.
    The one declared-case type: the task spec's
    cases, and what :func:`truereward.plugin.cases` returns for
    ``pytest.mark.parametrize`` (``str()`` is its id, so test ids read
    ``test_x[<case id>]``).

    ``weight`` (a finite number, 1.0 when absent) and ``required``
    (``false``: ``required-pass/1`` does not require it) are read by the
    weighted schemes (:mod:`truereward.record.scoring`), never by readers: they
    sit beside ``options``, not in them."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, allow_inf_nan=False)

    id: CaseId
    kind: Kind
    options: dict[str, JsonValue] = Field(default_factory=dict)
    weight: float | None = None
    required: bool | None = None

    def __str__(self) -> str:
        return self.id


class TaskSpec(BaseModel):
    """The declared cases of a task, and optionally how to read its evidence."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cases: list[CaseSpec]
    reader: str | None = None
    evidence: str | None = None
    options: dict[str, JsonValue] = Field(default_factory=dict)
    scoring: ScoringSpec | None = None
    _scoring: Scoring | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _cases_as_mapping(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            _check_count(value.get("cases"))
        if isinstance(value, Mapping) and isinstance(value.get("cases"), Mapping):
            value = dict(value)
            value["cases"] = [{"id": key, "kind": kind} for key, kind in value["cases"].items()]
        return value

    @model_validator(mode="after")
    def _ids_are_unique(self) -> TaskSpec:
        seen: set[str] = set()
        for index, case in enumerate(self.cases):
            if case.id in seen:
                raise ValueError(f"cases[{index}].id: {case.id!r} is declared twice")
            seen.add(case.id)
        self._scoring = resolve(self.scoring, self.cases)
        return self

    @property
    def resolved_scoring(self) -> Scoring | None:
        """The task's scoring as a grade carries it (:func:`truereward.record.scoring.resolve`:
        weights and required flags, its scheme and threshold, its dimensions),
        or ``None`` when it declares none. Resolved once, when the spec is
        validated, which refuses a scoring that names what is not there."""
        return self._scoring

    def case_kinds(self) -> dict[str, Kind]:
        """The case set as ``{id: kind}`` (what the fold takes)."""
        return {case.id: case.kind for case in self.cases}

    def case(self, case_id: str) -> CaseSpec | None:
        """The declaration of ``case_id``, or None."""
        for case in self.cases:
            if case.id == case_id:
                return case
        return None

    @classmethod
    def of(cls, value: Any) -> TaskSpec:
        """A spec from any accepted shape: a TaskSpec, a mapping ``{id:
        kind}``, a list of ``{id, kind}``, a spec mapping, or a SWE-bench
        instance. :class:`TaskSpecError` naming the field otherwise."""
        from pydantic import ValidationError

        from .validation import describe

        if isinstance(value, TaskSpec):
            return value
        if isinstance(value, Mapping) and ("FAIL_TO_PASS" in value or "PASS_TO_PASS" in value):
            return cls.from_swebench(value)
        if isinstance(value, list):
            value = {"cases": value}
        elif isinstance(value, Mapping) and "cases" not in value:
            value = {"cases": dict(value)}
        try:
            if isinstance(value, Mapping):
                _check_count(value.get("cases"))
        except ValueError as error:
            raise TaskSpecError(f"the case set {error}") from None
        try:
            return cls.model_validate(value)
        except ValidationError as error:
            raise TaskSpecError(describe(error, whole="(spec)")) from None

    @classmethod
    def from_swebench(cls, instance: Mapping[str, Any]) -> TaskSpec:
        """The case set of a SWE-bench instance: ``FAIL_TO_PASS`` tests are
        fail-to-pass cases, ``PASS_TO_PASS`` tests pass-to-pass cases. Each
        field is a list of test ids or a JSON-encoded string of one (as the
        dataset stores it); a missing field is an empty list."""
        cases: list[dict[str, Any]] = []
        for field, kind in (("FAIL_TO_PASS", "fail_to_pass"), ("PASS_TO_PASS", "pass_to_pass")):
            raw = instance.get(field, [])
            if isinstance(raw, str):
                try:
                    raw = loads(raw) if raw.strip() else []
                except StrictJSONError as error:
                    raise TaskSpecError(f"{field}: not a JSON list of test ids: {error}") from None
            if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
                raise TaskSpecError(
                    f"{field}: a list of test ids (strings), got {_SHORT.repr(raw)}"
                )
            cases.extend({"id": item, "kind": kind} for item in raw)
            try:
                _check_count(cases)
            except ValueError as error:
                raise TaskSpecError(f"the case set {error}") from None
        return cls.of({"cases": cases})

    @classmethod
    def load(cls, path: str | Path) -> TaskSpec:
        """Load a spec from a JSON or TOML file (by suffix; ``.toml`` is TOML,
        anything else JSON). :class:`TaskSpecError` naming the file."""
        from ..util import safefile

        where = Path(path)
        try:
            data = safefile.read_regular(str(where), limit=MAX_SPEC_BYTES)
        except (safefile.NotAFile, safefile.TooLarge) as error:
            raise TaskSpecError(f"{where}: refused: {error.strerror}") from None
        except OSError as error:
            raise TaskSpecError(f"{where}: cannot read: {error.strerror or error}") from None
        return cls.parse(data, name=str(where), toml=where.suffix == ".toml")

    @classmethod
    def parse(cls, data: bytes, *, name: str = "task spec", toml: bool = False) -> TaskSpec:
        """Load a spec from the bytes of a JSON (or TOML) file named ``name``:
        :class:`TaskSpecError` naming ``name`` for anything wrong with them,
        whatever the parser raised (module docstring). The runs of one task
        in a sweep carry the same spec: the same bytes, when small, give the
        same (immutable) spec without validating them again."""
        if cls is TaskSpec and len(data) <= _CACHED_SPEC_BYTES:
            try:
                return _parsed(bytes(data), toml)
            except TaskSpecError:
                pass  # parsed again below, for a message that names the file
        return cls._parse(data, name=name, toml=toml)

    @classmethod
    def _parse(cls, data: bytes, *, name: str, toml: bool) -> TaskSpec:
        if len(data) > MAX_SPEC_BYTES:
            raise TaskSpecError(
                f"{name}: {len(data)} bytes, more than the {MAX_SPEC_BYTES} bytes a task spec "
                "may have"
            )
        try:
            value: Any = tomllib.loads(data.decode("utf-8-sig")) if toml else loads(data)
        except RecursionError:
            raise TaskSpecError(
                f"{name}: nested too deeply to parse (a task spec nests at most {MAX_DEPTH} levels)"
            ) from None
        except ValueError as error:  # TOML, JSON and UTF-8 errors, a too long integer
            raise TaskSpecError(f"{name}: {_SHORT.repr(str(error))[1:-1]}") from None
        try:
            check_depth(value, "the task spec")
            return cls.of(value)
        except (TaskSpecError, ValueError) as error:
            raise TaskSpecError(f"{name}: {error}") from None


#: Specs up to this size are kept by their bytes (:meth:`TaskSpec.parse`),
#: the last :data:`_CACHED_SPECS` of them: a bound on what the cache holds.
_CACHED_SPEC_BYTES = 64 << 10
_CACHED_SPECS = 128


@functools.lru_cache(maxsize=_CACHED_SPECS)
def _parsed(data: bytes, toml: bool) -> TaskSpec:
    return TaskSpec._parse(data, name="task spec", toml=toml)


#: Values shown in messages are cut short: a spec can be tens of megabytes.
_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 300
_SHORT.maxlist = 5


def _check_count(cases: object) -> None:
    """``ValueError`` when ``cases`` (a list or mapping of declarations) is
    larger than a case set may be (:func:`~truereward.record.cases.case_set_problem`)."""
    if isinstance(cases, Mapping):
        problem = case_set_problem(cases, len(cases))
    elif isinstance(cases, list):
        ids = (item.get("id") if isinstance(item, Mapping) else None for item in cases)
        problem = case_set_problem(ids, len(cases))
    else:
        return
    if problem:
        raise ValueError(problem)
