"""The fold and publish steps of grading one run, as pure functions of
the previous step's output (publishing is the only I/O).

:func:`fold_reading` makes a reading the run's grade document (``run`` and
``attempts`` filled; a stored grade returned as it is; a document too large,
or one that cannot be built, a refusal of that run). :func:`publish_graded`
publishes it and returns a :class:`PublishedRun`; a failure is returned,
not raised (``transient`` says whether it may pass), so one run's target
cannot stop the others. docs/prefect.md, "What happens to each run".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from ..grade.document import (
    Attempt,
    GradeDocument,
    Publication,
    document_of,
    fold_rows,
    grade_document,
    publishable,
)
from ..grade.files import ctrf_view_for
from ..publishing import PublishConflict, PublishError, publish
from ..record.refusal import refusal
from ..sweeps.record import RunRecord
from ..util import urls
from .plan import RunJob
from .reading import RunReading

__all__ = [
    "GradedRun",
    "PublishedRun",
    "fold_reading",
    "is_transient",
    "kept_as_listed",
    "needing_steps",
    "publish_graded",
    "settle_published",
]


@dataclass(frozen=True)
class GradedRun:
    """A run's document, ready to publish; ``stored`` when it is the grade
    already published there (publishing it again only repairs).

    ``replaces`` is the digest of the grade it replaces (a regrade, or a
    grade in the run's own directory that it did not confirm), and
    ``distrusted`` why that grade was not the run's: it is then set aside
    as ``grade.previous.json`` when the new one is published."""

    job: RunJob
    document: GradeDocument
    stored: bool = False
    replaces: str | None = None
    distrusted: str | None = None


@dataclass(frozen=True)
class PublishedRun:
    """What publishing one run did.

    ``decision`` is ``created``, ``replaced``, ``unchanged`` (the same grade
    was there and complete), ``repaired`` (the same grade was there, and
    files an interrupted publish had left unfinished were written),
    ``conflict`` (another grade was published there meanwhile: nothing was
    touched) or ``failed`` (then ``error`` says why, and ``transient``
    whether trying again may help).

    ``record`` is the run's grade for the sweep summary (also when it could
    not be published: the grade was made; an ``unreadable`` record when no
    grade was made at all). ``stored``: the standing grade was kept, not
    graded in this flow run; ``regraded``: the run was graded again over a
    standing grade; ``attempts_now``: the attempts this flow run made (0
    for a kept grade).
    """

    record: RunRecord
    decision: str
    stored: bool = False
    error: str | None = None
    transient: bool = False
    regraded: bool = False
    attempts_now: int = 0
    distrusted: str | None = None
    #: False while the object-store set is published but its last look is
    #: left to the caller (:func:`settle_published`).
    settled: bool = True

    @property
    def failed(self) -> bool:
        """Whether publishing failed."""
        return self.error is not None


def fold_reading(reading: RunReading) -> GradedRun:
    """The run's document (see the module docstring). A grade standing in
    the run's own directory (``job.confirm``) is kept when the new grade
    agrees with it, and replaced otherwise, with none of its history
    (:mod:`truereward.grading.triage`)."""
    from ..grade.trust import disagreement

    job = reading.job
    if reading.stored is not None:
        return GradedRun(job=job, document=reading.stored, stored=True)
    document = _document(reading, (*job.history, *reading.history))
    regrade = job.replaces  # the regrade policy's, or a file that is not a grade
    if job.confirm is None:
        return GradedRun(job=job, document=document, replaces=regrade, distrusted=job.distrusted)
    why = disagreement(job.confirm, document)
    if why is None:
        if regrade is None:  # confirmed: the grade that stands is the run's
            return GradedRun(job=job, document=job.confirm, stored=True)
        return GradedRun(job=job, document=document, replaces=regrade)
    if regrade is not None and not job.confirm.gradable:
        # A refusal the policy regrades vouches for no reward: its attempts
        # are carried on as they would be from any other target.
        return GradedRun(job=job, document=document, replaces=regrade)
    if job.after:  # none of its history: this flow run's attempts from 1
        document = _document(_renumbered(reading, job.after), ())
    return GradedRun(job=job, document=document, replaces=job.confirm.digest, distrusted=why)


def _document(reading: RunReading, attempts: tuple[Attempt, ...]) -> GradeDocument:
    """The document of ``reading`` after the earlier ``attempts``."""
    job = reading.job
    run = {
        "id": job.run,
        "sweep": job.settings.sweep,
        "attempt": reading.attempt,
        "started": reading.started,
        "finished": reading.finished,
    }
    publication = _publication(job, reading)
    refusals = [] if reading.refusal is None else [reading.refusal]
    try:
        folded = (
            fold_rows([], scheme=job.settings.scheme, refusals=refusals)
            if refusals
            else reading.fold()
        )
        document = document_of(
            folded,
            run=run,
            evidence=reading.evidence,
            attempts=attempts,
            publication=publication,
            definition=reading.definition,
        )
        return publishable(document)  # a refusal in place of a grade too large to check
    except Exception as error:  # noqa: BLE001 - a bug: this run's refusal, not its chunk's
        said = f"{type(error).__name__}: {error}"
        return grade_document(
            [],
            scheme=job.settings.scheme,
            run=run,
            evidence=reading.evidence,
            refusals=[refusal("CASE_NOT_GRADED", f"folding run {job.run} failed: {said[:1000]}")],
            attempts=attempts,
            publication=publication,
        )


def _renumbered(reading: RunReading, earlier: int) -> RunReading:
    """``reading`` with its attempts numbered as if ``earlier`` attempts
    had not been made."""
    history = tuple(
        item.model_copy(update={"attempt": item.attempt - earlier}) for item in reading.history
    )
    return dataclasses.replace(reading, attempt=reading.attempt - earlier, history=history)


def _publication(job: RunJob, reading: RunReading) -> Publication:
    """The run's reward keys, and our CTRF view moved aside when the run's
    ``ctrf.json`` at its target is the evidence it was read from."""
    chosen = Publication.model_validate({"reward_keys": list(job.settings.reward_keys)})
    target = job.target
    read = [
        item.path if urls.is_url(item.path) else job.inside(item.path) for item in reading.evidence
    ]
    return ctrf_view_for(target.path if target.is_local else target.url, read, chosen)


def is_transient(error: PublishError) -> bool:
    """Whether publishing again may succeed: an I/O or store failure (a
    timeout, a dropped connection, a full disk being cleaned), not a
    conflict with another grade, a missing permission or a target that is
    not a directory."""
    if isinstance(error, PublishConflict):
        return False
    cause = error.__cause__
    if cause is None:
        return False
    return not isinstance(cause, PermissionError | NotADirectoryError | FileExistsError)


def _stays_in_the_run(job: RunJob) -> None:
    """A run publishing into its own directory must not be led out of it
    through a symlink (``logs`` linked to ``/etc``): nothing is written
    outside the run. :class:`~truereward.PublishError` naming the link."""
    from ..util import safefile

    target = job.target
    if job.in_place and target.is_local and urls.is_local(job.url):
        run = urls.local_path(job.url)
        if not safefile.inside(target.path, run):
            raise PublishError(
                f"{target.path}: leads out of the run directory through a symlink; "
                "nothing is written outside the run"
            )


def publish_graded(graded: GradedRun, *, settle: bool = True) -> PublishedRun:
    """Publish ``graded`` at its run's target (see the module docstring).
    ``settle=False``: on an object store, the set's last look is left to
    :func:`settle_published`, with the other runs of a chunk."""
    job, document = graded.job, graded.document
    record = RunRecord.from_document(document, job.run, with_cases=False)
    regraded = graded.replaces is not None
    made = 0
    if not graded.stored:
        made = (document.run.attempt if document.run is not None else 1) - job.after
        if graded.distrusted is not None and job.confirm is not None:
            made = document.run.attempt if document.run is not None else 1
    try:
        _stays_in_the_run(job)
        # A regrade replaces exactly the grade it found (setting aside one
        # that was not the run's); anything else creates.
        result = publish(
            document,
            job.target,
            replaces=graded.replaces,
            keep_replaced=graded.distrusted is not None,
            listing=job.listing,
            settle=settle,
        )
    except PublishError as error:
        return PublishedRun(
            record=record,
            decision="conflict" if isinstance(error, PublishConflict) else "failed",
            error=str(error),
            transient=is_transient(error),
            stored=graded.stored,
            regraded=regraded,
            attempts_now=made,
            distrusted=graded.distrusted,
        )
    decision = _DECISIONS[result.decision.value]
    if decision == "unchanged" and result.changed:
        decision = "repaired"
    return PublishedRun(
        record=record,
        decision=decision,
        stored=graded.stored,
        regraded=regraded,
        attempts_now=made,
        distrusted=graded.distrusted,
        settled=result.settled,
    )


def kept_as_listed(job: RunJob) -> PublishedRun | None:
    """What publishing a kept run again comes to when the listing of its
    target shows its whole set standing (nothing would be written): found
    without a task or a request. ``None`` for any other run (it goes
    through the steps: read, fold, publish, which repairs its set)."""
    from ..publishing.objects import standing_complete

    if job.standing is None or job.listing is None:
        return None
    if not standing_complete(job.standing, job.listing):
        return None
    record = RunRecord.from_document(job.standing, job.run, with_cases=False)
    return PublishedRun(record=record, decision="unchanged", stored=True)


def needing_steps(
    jobs: Iterable[RunJob], report: Callable[[PublishedRun], None]
) -> Iterator[RunJob]:
    """``jobs`` without the kept runs whose set stands whole
    (:func:`kept_as_listed`), which go to ``report`` at once."""
    for job in jobs:
        done = kept_as_listed(job)
        if done is None:
            yield job
        else:
            report(done)


def settle_published(items: list[tuple[GradedRun, PublishedRun]]) -> list[PublishedRun]:
    """The last look of the object-store protocol for runs published with
    ``settle=False`` (consecutive runs of one chunk, in plan order), made
    for all of them with one listing of their targets
    (:class:`~truereward.publishing.index.TargetIndex`, from the first):
    a set that is complete and whose ``grade.json`` is ours needs nothing
    more; any other is settled as its publish would have (its store asked
    again). A run that cannot be settled (the store fails) is a failed
    publish that may pass (publishing it again repairs its set)."""
    from functools import partial

    from ..publishing import open_store
    from ..publishing.objects import settle_listed
    from .triage import index_for

    waiting = [(graded, published) for graded, published in items if not published.settled]
    if not waiting:
        return [published for _, published in items]
    first = waiting[0][0].job
    index = index_for(first, start=first.run, runs=len(waiting))
    settled: dict[str, PublishedRun] = {}
    for graded, published in waiting:
        job = graded.job
        try:
            looked = (
                index.lookup(job.run)
                if index is not None and index.covers(job.run, job.target.url)
                else None
            )
            settle_listed(
                partial(open_store, job.target),
                graded.document,
                {} if looked is None else looked.etags(),
                created=published.decision == "created",
            )
            settled[job.run] = dataclasses.replace(published, settled=True)
        except PublishError as error:
            settled[job.run] = dataclasses.replace(
                published, decision="failed", error=str(error), transient=is_transient(error)
            )
    return [settled.get(graded.job.run, published) for graded, published in items]


_DECISIONS = {"same": "unchanged", "create": "created", "replace": "replaced"}
