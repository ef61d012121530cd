"""Whether a run is graded: the grade that stands at its target, and the
regrade policy.

Decided once per run, when the sweep is planned, before anything is read:

- no grade stands at the run's target: the run is graded;
- a grade stands and the policy does not select it: it is **kept**. Nothing
  is read; the grade is published again, which writes nothing when its files
  are complete and repairs them when an earlier publish was interrupted. So
  grading a sweep twice changes nothing;
- a grade stands and the policy selects it: the run is graded again
  (a **regrade**). Its new grade replaces exactly the grade that stood
  (``replaces`` = that grade's digest: a grade that changed meanwhile is a
  conflict, reported and never overwritten), and its document lists the
  attempts the old grade recorded, then the old grade itself as an attempt,
  then this flow run's attempts, oldest first, numbered on from them.

The policies (``GradeRequest.regrade``), by what the standing grade is:

============================  ===========================================
``none`` (default)            nothing is graded again
``grader-refusals``           refused, and every refusal is the grader's
                              (the store, the judge, the task definition):
                              the ops action after an outage
``refusals``                  refused, whoever is to blame
``all``                       every run
============================  ===========================================

A run-blamed refusal is never graded again under ``grader-refusals``: what
the run left will not change. A ``grade.json`` at the target that is not a
readable grade document is not a standing grade: the run is graded, and
publishing over the foreign file is refused as a conflict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator

from ..document import Attempt, GradeDocument
from .plan import RunJob
from .request import REGRADE_POLICIES, Regrade
from .stored import stored_grade_or_none

__all__ = ["REGRADE_POLICIES", "as_attempt", "selects", "triage", "triaged"]


def selects(policy: Regrade, gradable: bool, blames: Iterable[str]) -> bool:
    """Whether ``policy`` grades again a run whose standing grade is
    ``gradable`` with refusals blamed on ``blames`` (``run``/``grader``)."""
    if policy == "all":
        return True
    if gradable or policy == "none":
        return False
    if policy == "refusals":
        return True
    if policy == "grader-refusals":
        blamed = list(blames)
        return bool(blamed) and all(blame == "grader" for blame in blamed)
    raise ValueError(f"unknown regrade policy {policy!r}; one of {', '.join(REGRADE_POLICIES)}")


def as_attempt(document: GradeDocument) -> Attempt:
    """A standing grade as an earlier attempt of the run's next grade."""
    run = document.run
    return Attempt(
        attempt=run.attempt if run is not None else 1,
        gradable=document.gradable,
        reward=document.reward,
        refusals=list(document.refusals),
        started=run.started if run is not None else None,
        finished=run.finished if run is not None else None,
    )


def triage(job: RunJob, standing: GradeDocument | None, policy: Regrade) -> RunJob:
    """``job`` with the decision about ``standing`` (the grade at its target,
    ``None`` when there is none) under ``policy``; see the module docstring.
    Pure."""
    if standing is None:
        return job
    blames = [item.blame.value for item in standing.refusals]
    if not selects(policy, standing.gradable, blames):
        return dataclasses.replace(job, standing=standing)
    history = (*standing.attempts, as_attempt(standing))
    return dataclasses.replace(
        job,
        replaces=standing.digest,
        history=history,
        after=max(item.attempt for item in history),
    )


def triaged(jobs: Iterable[RunJob], policy: Regrade) -> Iterator[RunJob]:
    """Each job with its decision, looking up the grade at its target as it
    goes (lazily: memory holds the jobs being looked at, not the sweep)."""
    for job in jobs:
        yield triage(job, stored_grade_or_none(job.target), policy)
