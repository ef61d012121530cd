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

**A grade in the run's own directory is checked before it is kept.** With
the default target (each run's ``logs/verifier/``), the graded agent could
have written a ``grade.json`` there before the verifier ran. A standing
*gradable* grade there is kept only when :func:`truereward.trust.judge`
trusts it for the run's evidence as it is now (it folds to what it states,
and records the run's evidence file with the sha256 that file has now);
otherwise it is **distrusted**: the run is graded and its grade replaces
that one (naming its digest), keeping none of its history. An ungradable
standing grade carries no reward, so it is kept or regraded by the policy
alone. A target outside the runs is written by graders only: its grades are
kept as they are.
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


def triage(
    job: RunJob, standing: GradeDocument | None, policy: Regrade, distrust: str | None = None
) -> RunJob:
    """``job`` with the decision about ``standing`` (the grade at its target,
    ``None`` when there is none) under ``policy``; ``distrust`` is why the
    standing grade is not to be trusted (see the module docstring). Pure."""
    if standing is None:
        return job
    if distrust is not None:
        return dataclasses.replace(job, replaces=standing.digest, distrusted=distrust)
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


def distrust(job: RunJob, standing: GradeDocument) -> str | None:
    """Why the gradable grade standing in ``job``'s own directory is not to
    be trusted (``None``: it is): it must record the run's evidence file
    with the sha256 it has now, and fold to what it states. Reads the task
    spec and hashes the evidence (an evidence directory: the files the grade
    records under it)."""
    from ..codes import Ungradable
    from ..readers import Evidence
    from ..trust import judge
    from .reading import load_spec, reader_and_evidence

    try:
        _, where = reader_and_evidence(job, load_spec(job))
        location = Evidence(
            url=job.inside(where), storage_options=job.settings.storage_options, root=job.url
        )
        if location.is_dir():
            inside = where.rstrip("/") + "/"
            names = [item.path for item in standing.evidence if item.path.startswith(inside)]
            if not names:
                return f"it records no reading of {where}"
            for name in names:
                location.digest(name[len(inside) :])
        else:
            location.digest()
    except Ungradable as error:
        return f"its evidence cannot be read now ({error.code}: {error.why})"
    return judge(standing, list(location.digests))


def triaged(jobs: Iterable[RunJob], policy: Regrade) -> Iterator[RunJob]:
    """Each job with its decision, looking up the grade at its target as it
    goes (lazily: memory holds the jobs being looked at, not the sweep)."""
    for job in jobs:
        standing = stored_grade_or_none(job.target)
        why = None
        if standing is not None and standing.gradable and job.in_place:
            why = distrust(job, standing)
        yield triage(job, standing, policy, why)
