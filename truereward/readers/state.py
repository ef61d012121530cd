"""The ``state`` reader: the end state a run left, against expectations.

The evidence is a directory; each declared case names a file (``path``)
and what it expects of it (``exists``, ``text``, ``contains``, ``sha256``,
JSON Pointer checks). A missing or wrong file fails its case; invalid
options are ``CASE_INVALID``; a path that leads out through a symlink fails
its case, never read. docs/readers.md, "state", gives the rules.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..codes import Ungradable
from ..record.cases import CaseResult, Observation
from ..record.taskspec import CaseSpec, TaskSpec
from ..record.validation import describe
from ..util.exceptions import TruerewardError
from ..util.jsonvalues import MISSING as _MISSING
from ..util.jsonvalues import json_equal, json_pointer
from ..util.segments import check_inner_path
from ..util.strictjson import StrictJSONError, loads
from .evidence import Evidence
from .outcomes import case_invalid

__all__ = ["READER", "StateReader", "json_equal", "json_pointer"]


M = TypeVar("M", bound=BaseModel)


class InvalidExpectation(TruerewardError, ValueError):
    """The case's options are not a valid expectation."""


class _PointerCheck(BaseModel):
    """``{pointer, equals}`` or ``{pointer, exists: bool}``."""

    model_config = ConfigDict(extra="forbid", strict=True)
    pointer: str
    equals: Any = None
    exists: bool | None = None

    @field_validator("pointer")
    @classmethod
    def _rooted(cls, pointer: str) -> str:
        if pointer and not pointer.startswith("/"):
            raise ValueError("must start with '/'")
        return pointer

    @model_validator(mode="after")
    def _one_test(self) -> _PointerCheck:
        if ("equals" in self.model_fields_set) == ("exists" in self.model_fields_set):
            raise ValueError("a check is {pointer, equals} or {pointer, exists: bool}")
        return self


class _Expectation(BaseModel):
    """The shape of a ``state`` case's options (the module docstring)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    path: str
    exists: bool = True
    text: str | None = None
    contains: list[str] = []
    sha256: str | None = None
    checks: list[_PointerCheck] = Field(default=[], alias="json")

    @field_validator("path")
    @classmethod
    def _inside(cls, path: str) -> str:
        return check_inner_path(path, "the evidence")

    @field_validator("contains", mode="before")
    @classmethod
    def _one_or_more(cls, contains: object) -> object:
        return [contains] if isinstance(contains, str) else contains


def checked(shape: type[M], options: Mapping[str, Any]) -> M:
    """A case's ``options`` read as the model ``shape``;
    ``InvalidExpectation`` naming the field when they are not one."""
    try:
        return shape.model_validate(options)
    except ValidationError as error:
        raise InvalidExpectation(describe(error, limit=3)) from None


def _first_failure(options: Mapping[str, Any], data: bytes | None) -> str:
    """Why the expectation does not hold, or "" when it does."""
    path = options["path"]
    if not options.get("exists", True):
        return "" if data is None else f"{path} exists, and it must not"
    if data is None:
        return f"{path} does not exist"
    if "sha256" in options and hashlib.sha256(data).hexdigest() != options["sha256"].lower():
        return f"{path} does not have the expected sha256"
    needs_text = "text" in options or "contains" in options or "json" in options
    text = ""
    if needs_text:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return f"{path} is not UTF-8 text"
    if "text" in options and text.removesuffix("\n") != options["text"].removesuffix("\n"):
        return f"{path} does not hold the expected text"
    contains = options.get("contains", [])
    for needle in [contains] if isinstance(contains, str) else contains:
        if needle not in text:
            return f"{path} does not contain {needle!r}"
    if options.get("json"):
        try:
            document = loads(text)
        except StrictJSONError as error:
            return f"{path} is not JSON: {error}"
        for check in options["json"]:
            found = json_pointer(document, check["pointer"])
            if "exists" in check:
                if (found is not _MISSING) != check["exists"]:
                    state = "exists" if found is not _MISSING else "does not exist"
                    return f"{path}{check['pointer']} {state}"
            elif found is _MISSING:
                return f"{path}{check['pointer']} does not exist"
            elif not json_equal(found, check["equals"]):
                return (
                    f"{path}{check['pointer']} is {found!r:.200}, expected {check['equals']!r:.200}"
                )
    return ""


def _leaves_root(evidence: Evidence, path: str) -> str | None:
    """Where ``path`` resolves to when, following symlinks, it leads out of
    the local evidence directory; None when it stays inside (or the
    evidence is a URL: object stores have no symlinks)."""
    if not evidence.is_local:
        return None
    root = os.path.realpath(evidence.location())
    target = os.path.realpath(evidence.location(path))
    return None if os.path.commonpath([root, target]) == root else target


class StateReader:
    """The end state a run left: expected files and JSON values."""

    name = "state"
    default_evidence = "workspace"

    def _read_optional(self, evidence: Evidence, path: str) -> tuple[bytes | None, str]:
        """The file's bytes (None when absent), or why it is not a usable
        file (a directory, too large): then the case fails. An I/O error is
        the grader's and propagates."""
        try:
            return evidence.read_bytes(path), ""
        except Ungradable as refusal:
            if refusal.code == "EVIDENCE_MISSING":
                return None, ""
            if refusal.code == "EVIDENCE_MALFORMED":
                return None, refusal.why
            raise

    def _row(self, evidence: Evidence, case: CaseSpec) -> CaseResult:
        try:
            checked(_Expectation, case.options)
        except InvalidExpectation as error:
            return case_invalid(case, f"options: {error}")
        path = str(case.options["path"])
        outside = _leaves_root(evidence, path)
        if outside is not None:
            # The run planted the link: its state does not hold that file, so
            # the case fails (run's doing), never a grader-blamed refusal a
            # run could use to dodge a failing case.
            return CaseResult(
                id=case.id,
                kind=case.kind,
                verdict="fail",
                why=f"path {path!r} leads out of the run's state through a symlink "
                f"(to {outside}); it is not read",
                observations=[Observation(name=path, verdict="outside", why=outside)],
            )
        data, problem = self._read_optional(evidence, path)
        why = problem or _first_failure(case.options, data)
        return CaseResult(
            id=case.id,
            kind=case.kind,
            verdict="fail" if why else "pass",
            why=why,
            observations=[
                Observation(name=path, verdict="present" if data is not None else "absent", why="")
            ],
        )

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult]:
        if not evidence.exists():
            raise Ungradable(
                "EVIDENCE_MISSING",
                f"{evidence.describe()}: the end state the run left is not there",
            )
        if evidence.is_local and os.path.islink(evidence.location()):
            raise Ungradable(
                "EVIDENCE_MALFORMED",
                f"{evidence.describe()}: a symlink: the end state is read without following links",
            )
        evidence.refuse_outside(evidence.location(), evidence.describe())
        if not evidence.is_dir():
            raise Ungradable(
                "EVIDENCE_MALFORMED", f"{evidence.describe()}: the end state must be a directory"
            )
        return [self._row(evidence, case) for case in spec.cases]


READER = StateReader()
