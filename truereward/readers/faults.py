"""Fault injection: a reader that fails on purpose, then (maybe) heals.

For exercising what a sweep grader does with a failing grader (retries,
recorded attempts, routing by blame). A run opts in by naming
``truereward.readers.faults:READER``; its evidence is a fault plan
(``failing_attempts``, ``code``, ``delay_seconds``, then the real reader).
docs/readers.md, "faults on purpose", gives the plan's fields.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..codes import Ungradable, lookup
from ..record.cases import CaseResult
from ..record.taskspec import TaskSpec
from ..record.validation import describe
from ..util import urls
from ..util.exceptions import UnknownName
from ..util.segments import check_inner_path
from ..util.strictjson import StrictJSONError, loads
from .attempt import current_attempt
from .evidence import Evidence

if TYPE_CHECKING:
    from . import Scored

__all__ = ["READER", "FaultPlan", "FaultyReader"]


class FaultPlan(BaseModel):
    """What to inject, read from the run's ``faults.json``."""

    model_config = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False)

    reader: str = "rows"
    evidence: str | None = None
    failing_attempts: Annotated[int, Field(ge=0)] | None = None
    code: str = "EVIDENCE_UNREADABLE"
    why: str = "injected grader fault"
    delay_seconds: Annotated[float, Field(ge=0, le=60)] = 0.0

    @field_validator("code")
    @classmethod
    def _known_code(cls, value: str) -> str:
        try:
            lookup(value)
        except UnknownName as error:
            raise ValueError(str(error)) from None
        return value

    @field_validator("evidence")
    @classmethod
    def _beside_the_plan(cls, value: str | None) -> str | None:
        return value if value is None else check_inner_path(value, "the plan's directory")

    def fails(self, attempt: int) -> bool:
        """Whether attempt ``attempt`` (from 1) fails."""
        return self.failing_attempts is None or attempt <= self.failing_attempts


def _plan(evidence: Evidence) -> FaultPlan:
    where = evidence.describe()
    try:
        value = loads(evidence.read_bytes())
        if not isinstance(value, dict):
            raise StrictJSONError(f"a fault plan is a JSON object, got {type(value).__name__}")
        return FaultPlan.model_validate(value)
    except StrictJSONError as error:
        raise Ungradable("EVIDENCE_MALFORMED", f"{where}: {error}") from None
    except ValidationError as error:
        message = describe(error, limit=1, whole="(plan)")
        raise Ungradable("EVIDENCE_MALFORMED", f"{where}: {message}") from None


def _beside(evidence: Evidence, relative: str) -> Evidence:
    return Evidence(
        url=urls.join(urls.parent(evidence.url), relative),
        storage_options=dict(evidence.storage_options),
        max_bytes=evidence.max_bytes,
        root=evidence.root,
    )


class FaultyReader:
    """A reader that injects the faults its plan describes (module docstring)."""

    name = "faults"
    default_evidence = "faults.json"

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult] | Scored:
        from . import get_reader

        plan = _plan(evidence)
        if plan.delay_seconds:
            time.sleep(plan.delay_seconds)
        attempt = current_attempt()
        if plan.fails(attempt):
            raise Ungradable(plan.code, f"{plan.why} (attempt {attempt})")
        inner = get_reader(plan.reader)
        source = _beside(evidence, plan.evidence or inner.default_evidence)
        try:
            return inner.read(source, spec, options)
        finally:
            evidence.digests.extend(source.digests)


READER = FaultyReader()
