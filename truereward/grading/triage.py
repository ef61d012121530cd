"""Whether a run is graded: the grade that stands at its target, and the
regrade policy.

Decided once per run, when the sweep is planned: no grade, graded; a grade
the policy does not select, kept (published again, which repairs an
interrupted publish); one it selects, regraded, replacing exactly that
grade and carrying its attempts. A grade in the run's own directory is
confirmed by grading again, never kept on its word. docs/prefect.md, "A
grade that already stands", gives the policies and the rules.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Iterator

from ..grade.document import Attempt, GradeDocument
from ..grade.files import GRADE
from ..publishing import PublishError
from ..publishing.index import Standing, TargetIndex
from ..record.refusal import Outlook, outlook
from ..util import urls
from ..util.io import LOCAL_IO, ordered_map, read_ahead
from .plan import DEFAULT_TARGET, RunJob
from .request import REGRADE_POLICIES, Regrade
from .stored import stored_grade_or_none

__all__ = [
    "REGRADE_POLICIES",
    "as_attempt",
    "changed_since",
    "in_place",
    "index_for",
    "selects",
    "standing_outlook",
    "triage",
    "triaged",
]


def _never_changed() -> bool:
    return False


def selects(
    policy: Regrade, standing: Outlook, changed: Callable[[], bool] = _never_changed
) -> bool:
    """Whether ``policy`` grades again a run whose standing grade has the
    outlook ``standing`` (:func:`truereward.record.refusal.outlook`); ``changed``
    says whether the task definition or reader changed since that grade,
    asked only for a grade that needs a fix under ``grader-refusals``."""
    if policy not in REGRADE_POLICIES:
        raise ValueError(f"unknown regrade policy {policy!r}; one of {', '.join(REGRADE_POLICIES)}")
    if policy == "all":
        return True
    if standing == "gradable" or policy == "none":
        return False
    if policy == "refusals":
        return True
    if policy == "needing-fix":
        return standing == "needs-fix"
    if standing == "retryable":
        return True
    return standing == "needs-fix" and changed()


def standing_outlook(document: GradeDocument) -> Outlook:
    """The outlook of a standing grade (:func:`truereward.record.refusal.outlook`)."""
    return outlook((item.code, item.blame.value) for item in document.refusals)


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


def changed_since(job: RunJob, standing: GradeDocument) -> bool:
    """Whether ``job``'s task definition or reader differ from the ones
    ``standing`` was made with (module docstring): its recorded digest
    against :func:`~truereward.grading.reading.current_definition`."""
    from .reading import current_definition

    if standing.definition is None:
        return True
    return current_definition(job) != standing.definition


def triage(
    job: RunJob,
    standing: GradeDocument | None,
    policy: Regrade,
    changed: Callable[[RunJob, GradeDocument], bool] = changed_since,
) -> RunJob:
    """``job`` with the decision about ``standing`` (the grade at its target,
    ``None`` when there is none) under ``policy`` (module docstring).
    Pure but for ``changed``, asked only about a grade that needs a fix."""
    if standing is None:
        return job
    if not selects(policy, standing_outlook(standing), lambda: changed(job, standing)):
        return dataclasses.replace(job, standing=standing)
    history = (*standing.attempts, as_attempt(standing))
    return dataclasses.replace(
        job,
        replaces=standing.digest,
        history=history,
        after=max(item.attempt for item in history),
    )


def in_place(job: RunJob, policy: Regrade, listed: Standing | None = None) -> RunJob:
    """The decision about what stands in ``job``'s own directory, where the
    run could have written it (module docstring): a grade to confirm by
    grading the run again, or a file that is not a grade, to replace.
    ``listed``: what a listing showed there (no ``grade.json``: nothing to
    read)."""
    from .stored import parse_stored, standing_bytes

    if listed is not None and GRADE not in listed.objects:
        return job
    try:
        data = standing_bytes(job.target)
    except (OSError, PublishError):
        return job  # publishing will say what is wrong with the target
    if data is None:
        return job
    standing, why = parse_stored(data)
    if standing is None:
        return dataclasses.replace(
            job,
            replaces=hashlib.sha256(data).hexdigest(),
            distrusted=f"it is not a grade document ({why})",
        )
    decided = triage(job, standing, policy)
    return dataclasses.replace(decided, standing=None, confirm=standing)


def _stored(job: RunJob, listed: Standing | None) -> GradeDocument | None:
    """The grade standing at ``job``'s own target: none when the listing
    shows no ``grade.json`` (nothing is asked), else read (one GET)."""
    if listed is not None and GRADE not in listed.objects:
        return None
    return stored_grade_or_none(job.target)


def index_for(job: RunJob, start: str | None = None, runs: int | None = None) -> TargetIndex | None:
    """The index of the targets of ``job``'s sweep, when they lie under one
    S3 prefix (:class:`~truereward.publishing.index.TargetIndex`), its
    listing beginning at the run ``start`` when given, its pages sized for
    ``runs`` runs when given."""
    settings = job.settings
    if settings.target is not None:
        options = settings.target.options()
        return TargetIndex.open(settings.target.url, options, start=start, runs=runs)
    base = urls.parent(job.url)
    return TargetIndex.open(
        base, settings.storage_options, inner=DEFAULT_TARGET, start=start, runs=runs
    )


def triaged(jobs: Iterable[RunJob], policy: Regrade, io_budget: int = LOCAL_IO) -> Iterator[RunJob]:
    """Each job with its decision, looking up what stands at its target as
    it goes (lazily: memory holds the jobs being looked at, not the sweep).
    On S3 the targets are listed a page at a time as the plan advances, and
    only a standing ``grade.json`` is read; up to ``io_budget`` of those
    reads are in flight at once (:func:`truereward.util.io.ordered_map`),
    going on while the caller is busy with the jobs before
    (:func:`~truereward.util.io.read_ahead`), the jobs coming out in
    order."""

    def looked() -> Iterator[tuple[RunJob, Standing | None]]:
        index: TargetIndex | None = None
        opened = False
        for job in jobs:
            if not opened:
                index, opened = index_for(job), True
            covered = index is not None and index.covers(job.run, job.target.url)
            listed = index.lookup(job.run) if index is not None and covered else None
            if listed is not None:
                job = dataclasses.replace(job, listing=listed.etags())
            yield job, listed

    def decided(item: tuple[RunJob, Standing | None]) -> RunJob:
        job, listed = item
        if job.in_place:
            return in_place(job, policy, listed)
        standing = _stored(job, listed)
        chosen = triage(job, standing, policy)
        if chosen.replaces is not None and standing is not None and listed is not None:
            # On an object store a regrade names the grade it replaces by
            # the ETag listed, when that is the MD5 of the bytes triaged:
            # the publisher then need not read them again for their sha256.
            etag = listed.etags().get(GRADE)
            if etag == hashlib.md5(standing.to_bytes(), usedforsecurity=False).hexdigest():
                chosen = dataclasses.replace(chosen, replaces=etag)
        return chosen

    return read_ahead(ordered_map(decided, looked(), io_budget), 2 * io_budget)
