"""RunRecord: what a sweep analysis needs from one run's grade.

A sweep is read one run at a time; each run becomes a small
:class:`RunRecord` (its outcome, refusal codes and blame, attempts, and, for
stability, its cases' verdicts), and the document is dropped. A run whose
``grade.json`` is missing or cannot be read is a record too, in the state
``unreadable``: it is reported under its own heading, never as a reward.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from ..grade.document import GradeDocument
    from ..record.refusal import Outlook

__all__ = ["AttemptNote", "RefusalNote", "RunRecord", "RunState", "notes"]


class RunState(StrEnum):
    """``gradable`` (a reward), ``ungradable`` (refusals, no reward) or
    ``unreadable`` (no grade could be read for the run)."""

    GRADABLE = "gradable"
    UNGRADABLE = "ungradable"
    UNREADABLE = "unreadable"


class RefusalNote(NamedTuple):
    """One refusal as a sweep analysis sees it: its code, who is to blame
    (``run`` or ``grader``) and the sentence for a person."""

    code: str
    blame: str
    why: str = ""


class AttemptNote(NamedTuple):
    """One earlier attempt at grading a run: its number (from 1), whether it
    was gradable, and its refusals."""

    attempt: int
    gradable: bool
    refusals: tuple[RefusalNote, ...] = ()

    @property
    def codes(self) -> tuple[str, ...]:
        """The distinct refusal codes of the attempt, sorted."""
        return tuple(sorted({item.code for item in self.refusals}))


def notes(refusals: Iterable[Any]) -> tuple[RefusalNote, ...]:
    """Refusals (of a document, or of a view of one: anything with ``code``,
    ``blame`` and ``why``) as notes."""
    return tuple(
        RefusalNote(item.code, str(getattr(item.blame, "value", item.blame)), item.why)
        for item in refusals
    )


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run of a sweep.

    - ``run``: the run's id within the sweep (its directory name).
    - ``state``; ``reward`` is a float exactly when the state is gradable.
    - ``scheme``: the document's scheme (``None`` when unreadable).
    - ``refusals``: a :class:`RefusalNote` ``(code, blame, why)`` per
      refusal, in document order.
    - ``attempts``: how many times the run was graded (1 when not retried),
      over every flow run that graded it.
    - ``history``: the earlier attempts (:class:`AttemptNote`), oldest
      first: the document's ``attempts`` (empty when not retried).
    - ``problem``: why the grade is unreadable (``None`` otherwise).
    - ``cases``: ``(case id, verdict)`` per row, when read (stability needs
      them; summaries and comparisons do not), else ``None``.
    """

    run: str
    state: RunState
    reward: float | None = None
    scheme: str | None = None
    refusals: tuple[RefusalNote, ...] = ()
    attempts: int = 1
    problem: str | None = None
    cases: tuple[tuple[str, str], ...] | None = None
    history: tuple[AttemptNote, ...] = ()

    def __post_init__(self) -> None:
        if (self.state is RunState.GRADABLE) != (self.reward is not None):
            raise ValueError(f"run {self.run!r}: a reward exactly when gradable")
        if (self.state is RunState.UNREADABLE) != (self.problem is not None):
            raise ValueError(f"run {self.run!r}: a problem exactly when unreadable")
        if self.state is RunState.UNGRADABLE and not self.refusals:
            raise ValueError(f"run {self.run!r}: an ungradable run has refusals")
        if self.state is RunState.GRADABLE and self.refusals:
            raise ValueError(f"run {self.run!r}: a gradable run has no refusals")

    @property
    def graded(self) -> bool:
        """True when the run has a reward."""
        return self.state is RunState.GRADABLE

    @property
    def codes(self) -> tuple[str, ...]:
        """The distinct refusal codes, sorted."""
        return tuple(sorted({item.code for item in self.refusals}))

    @property
    def blames(self) -> tuple[str, ...]:
        """Who failed, over the refusals (distinct, sorted)."""
        return tuple(sorted({item.blame for item in self.refusals}))

    @property
    def retried(self) -> bool:
        """Whether the run took more than one attempt."""
        return self.attempts > 1

    @property
    def grader_refused(self) -> bool:
        """Whether the run stands refused and every refusal is the grader's
        (the grader, the store, the judge, the task definition): the runs an
        ops team grades again once the fault is fixed (``regrade:
        grader-refusals``)."""
        return self.state is RunState.UNGRADABLE and all(
            item.blame == "grader" for item in self.refusals
        )

    @property
    def outlook(self) -> Outlook:
        """What grading the run again can do (:func:`truereward.record.refusal.outlook`):
        ``gradable``, ``final`` (some refusal is the run's), ``retryable``
        or ``needs-fix`` (a change of the task definition or reader first)."""
        from ..record.refusal import outlook

        return outlook((item.code, item.blame) for item in self.refusals)

    @property
    def retryable(self) -> bool:
        """Refused for the grader's reasons, and grading again may heal it
        (the runs ``regrade: grader-refusals`` grades again at once)."""
        return self.state is RunState.UNGRADABLE and self.outlook == "retryable"

    @property
    def needs_fix(self) -> bool:
        """Refused for the grader's reasons that grading again cannot heal:
        the task definition or the reader has to change first."""
        return self.state is RunState.UNGRADABLE and self.outlook == "needs-fix"

    @property
    def unchanged(self) -> bool:
        """Graded again with nothing changed: the run needs a fix, and its
        standing grade has the very refusals (code, blame, why) of the
        attempt before it: the last grading added an identical attempt."""
        if not (self.needs_fix and self.history):
            return False
        return sorted(self.history[-1].refusals) == sorted(self.refusals)

    @classmethod
    def unreadable(cls, run: str, why: str) -> RunRecord:
        """A run without a readable grade, and why."""
        return cls(run=run, state=RunState.UNREADABLE, problem=why)

    @classmethod
    def from_document(
        cls, document: GradeDocument, run: str | None = None, *, with_cases: bool = True
    ) -> RunRecord:
        """The record of a :class:`~truereward.GradeDocument` in memory (as
        the Prefect flow holds them). ``run`` defaults to the document's run
        id (``ValueError`` when it has none)."""
        if run is None:
            if document.run is None or document.run.id is None:
                raise ValueError("the document has no run id: name the run")
            run = document.run.id
        return cls.from_grade(document, run, with_cases=with_cases)

    @classmethod
    def from_grade(cls, grade: Any, run: str, *, with_cases: bool) -> RunRecord:
        """The record of run ``run`` from a grade document or a view of one
        (anything with the document's ``gradable``, ``reward``, ``scheme``,
        ``refusals``, ``run``, ``attempts`` and, ``with_cases``, ``detail``)
        whose outcome is consistent."""
        attempt = grade.run.attempt if grade.run is not None else 1
        return cls(
            run=run,
            state=RunState.GRADABLE if grade.gradable else RunState.UNGRADABLE,
            reward=grade.reward if grade.gradable else None,
            scheme=grade.scheme,
            refusals=notes(grade.refusals),
            attempts=max(attempt, len(grade.attempts) + 1),
            cases=tuple((row.id, row.verdict) for row in grade.detail) if with_cases else None,
            history=tuple(
                AttemptNote(item.attempt, item.gradable, notes(item.refusals))
                for item in grade.attempts
            ),
        )
