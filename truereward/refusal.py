"""A refusal: one reason a run has no reward.

``{code, blame, why, case}``: the code from :mod:`truereward.codes`, who failed
(copied from the code when the refusal is made, so a stored document says it
without the registry), the sentence for a person, and the case it is about
(``None`` when it is about the run as a whole).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from . import codes
from .exceptions import UnknownName

__all__ = ["Refusal", "from_ungradable", "refusal", "sort_key"]


class Refusal(BaseModel):
    """One reason a run has no reward."""

    model_config = ConfigDict(frozen=True, strict=True, extra="forbid")

    code: Annotated[str, StringConstraints(pattern=codes.CODE_PATTERN.pattern)]
    blame: Annotated[codes.Blame, Field(strict=False)]  # "run" or "grader"
    why: str = ""
    case: str | None = None

    @property
    def retry(self) -> bool:
        """Whether grading again may help, by default (from the code's
        declaration; False for a code this process does not know)."""
        try:
            return codes.lookup(self.code).retry
        except UnknownName:
            return False


def refusal(code: str, why: str, case: str | None = None) -> Refusal:
    """A refusal under ``code`` (:class:`~truereward.exceptions.UnknownName` if no
    one declared it), with the code's blame."""
    info = codes.lookup(code)
    return Refusal.model_validate({"code": code, "blame": info.blame, "why": why, "case": case})


def sort_key(item: Refusal) -> tuple[str, str, str]:
    """Refusals are ordered by (case, code, why); a run-level refusal (no case)
    sorts first. The order makes documents independent of arrival order."""
    return (item.case or "", item.code, item.why)


def from_ungradable(error: codes.Ungradable, case: str | None = None) -> Refusal:
    """The refusal an :class:`~truereward.codes.Ungradable` carries; ``case``
    overrides the one it was raised with."""
    return refusal(error.code, error.why, case if case is not None else error.case)
