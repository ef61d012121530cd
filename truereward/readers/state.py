"""The ``state`` reader: the end state a run left, against expectations.

The evidence is a directory (the run's workspace, or a recorded copy of
it). Each declared case names what it expects in its options:

.. code-block:: json

    {"id": "config-written", "kind": "fail_to_pass", "options": {
        "path": "out/config.json",
        "json": [{"pointer": "/server/port", "equals": 8080},
                 {"pointer": "/debug", "exists": false}]}}

- ``path`` (required): a file relative to the evidence directory (no ``..``,
  not absolute, and for a local directory not reached through a symlink
  that leads out of it: the path is resolved, and a file outside the
  evidence directory is never read; a symlink that stays inside is fine);
- ``exists`` (default true): whether the file must exist; with false the
  case passes exactly when it is absent;
- ``text``: the file's whole text must equal it (a final newline is
  ignored on both sides);
- ``contains``: a string or list of strings that must all occur in the text;
- ``sha256``: the file's bytes must have this digest;
- ``json``: a list of JSON Pointer (RFC 6901) checks on the file parsed as
  strict JSON, each ``{"pointer", "equals"}`` (deep equality; ``1`` equals
  ``1.0``, ``true`` never equals ``1``) or ``{"pointer", "exists": bool}``.

Every expectation must hold for the case to pass; the row's why lists the
first one that did not. A missing expected file, a file that is not UTF-8
text where text is checked, or not JSON where JSON is checked, is a failure
of that case: the run did not leave the expected state. Options that are
not valid (unknown keys, a bad pointer, a path that escapes the directory)
make that case ungradable with ``CASE_INVALID``: the task is broken, not the
run. A path that resolves outside the directory through a symlink fails
its case, whatever it expects (``exists: false`` included), naming the
path and where it leads: what lies outside the run's state is never read,
and the run planted the link, so it is the run's failure, never a
grader-blamed refusal that a run could use to dodge a failing case. An evidence
directory that does not exist at all is ``EVIDENCE_MISSING``; a file where
the directory should be is ``EVIDENCE_MALFORMED``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..cases import CaseResult, Observation
from ..codes import Ungradable
from ..exceptions import TruerewardError
from ..jsonvalues import MISSING as _MISSING
from ..jsonvalues import json_equal, json_pointer
from ..strictjson import StrictJSONError, loads
from ..taskspec import CaseSpec, TaskSpec
from ..validation import describe
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
        if not path or path.startswith("/") or ".." in path.split("/"):
            raise ValueError(f"must be a relative path inside the evidence, got {path!r}")
        return path

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
