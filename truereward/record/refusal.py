"""A refusal: one reason a run has no reward.

``{code, blame, why, case}``: the code from :mod:`truereward.codes`, who failed
(copied from the code when the refusal is made, so a stored document says it
without the registry), the sentence for a person, and the case it is about
(``None`` when it is about the run as a whole).

:func:`outlook` says what grading a refused run again can do, from its
refusals and the codes' retry defaults; :func:`what_to_change` says, for a
refusal that needs a fix, which input to change.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from .. import codes
from ..util.exceptions import UnknownName

__all__ = [
    "Outlook",
    "Refusal",
    "from_ungradable",
    "outlook",
    "refusal",
    "sort_key",
    "what_to_change",
]


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
    """A refusal under ``code`` (:class:`~truereward.util.exceptions.UnknownName` if no
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


#: What grading a run again can do, by its standing refusals:
#:
#: - ``gradable``: no refusal;
#: - ``final``: some refusal is the run's: grading again cannot change it;
#: - ``retryable``: every refusal is the grader's and its code may pass on
#:   another try (``retry`` in :mod:`truereward.codes`): an outage, a timeout;
#: - ``needs-fix``: every refusal is the grader's and one of them will not
#:   pass by grading again (``retry`` false: ``CASES_MISSING``,
#:   ``NO_FAIL_TO_PASS``, ``CASE_INVALID``...): the task definition or the
#:   reader has to change first.
Outlook = Literal["gradable", "final", "retryable", "needs-fix"]


def outlook(refusals: Iterable[tuple[str, str]]) -> Outlook:
    """The :data:`Outlook` of a grade refused with ``refusals``, each a
    ``(code, blame)`` pair (blame ``run`` or ``grader``). A code this process
    does not know counts as not retryable."""
    items = list(refusals)
    if not items:
        return "gradable"
    if any(blame != codes.Blame.GRADER for _, blame in items):
        return "final"
    for code, _ in items:
        try:
            retry = codes.lookup(code).retry
        except UnknownName:
            retry = False
        if not retry:
            return "needs-fix"
    return "retryable"


#: What to change for the shared codes that grading again cannot heal.
_CHANGES = {
    "CASES_MISSING": "the task definition (drop the cases no result names) or the reader "
    "(give a result for every declared case)",
    "NO_FAIL_TO_PASS": "the task definition: declare at least one fail_to_pass case",
    "CASE_INVALID": "the task definition (its case declarations, reader name or scheme)",
}


def what_to_change(code: str) -> str:
    """For a grader-blamed code that grading again cannot heal, the input to
    change before the run is graded again; a reader's own code gets the
    general answer."""
    return _CHANGES.get(code, "the task definition or the reader that raised it")
