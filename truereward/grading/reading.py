"""Reading one run: its task spec, its evidence, its rows, once per attempt.

:func:`read_run` is one attempt (:class:`RunReading`: the rows, or the
refusal, with the digests of what was read); every problem is a refusal,
never an exception. :func:`kept` is the reading of a run whose standing
grade is kept, and :meth:`RunReading.refusals` folds a reading to tell
whether it is worth reading again. docs/prefect.md, "What happens to each
run" and "Retries, routed by blame", gives the rules.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ..codes import Blame, Ungradable
from ..grade.document import Attempt, EvidenceDigest, FoldedRows, GradeDocument, fold_rows
from ..readers.attempt import attempt_scope
from ..record.refusal import Refusal, from_ungradable
from .plan import RunJob

if TYPE_CHECKING:
    from ..readers import Reader
    from ..record.cases import CaseResult
    from ..record.scoring import Scoring
    from ..record.taskspec import TaskSpec

__all__ = [
    "RunReading",
    "current_definition",
    "definition_of",
    "kept",
    "load_spec",
    "read_run",
    "reader_and_evidence",
    "worth_retrying",
]


def worth_retrying(refusals: list[Refusal]) -> bool:
    """Whether grading again may change the answer: there are refusals, and
    every one is grader-blamed with a code that may pass (``retry``). A
    single run-blamed refusal settles it: what the run left will not change."""
    return bool(refusals) and all(item.blame is Blame.GRADER and item.retry for item in refusals)


@dataclass(frozen=True)
class RunReading:
    """One attempt at reading a run (or the grade already published for it).

    Exactly one of: ``rows`` with ``spec`` (the reader answered; with
    ``scoring`` when the evidence declared the task's scoring), ``refusal``
    (reading refused), ``stored`` (the grade already published is kept:
    nothing was read). ``history`` holds this flow run's earlier attempts when
    the run was read again (the job's ``history`` holds those of earlier
    flow runs). ``folded``: the rows folded, once :meth:`with_fold` has.
    """

    job: RunJob
    attempt: int
    started: datetime
    finished: datetime
    rows: tuple[CaseResult, ...] = ()
    spec: TaskSpec | None = None
    refusal: Refusal | None = None
    evidence: tuple[EvidenceDigest, ...] = ()
    stored: GradeDocument | None = None
    history: tuple[Attempt, ...] = ()
    scoring: Scoring | None = None
    definition: str | None = None
    folded: FoldedRows | None = None

    @property
    def case_set(self) -> TaskSpec | None:
        """What the rows are folded against: the spec, or ``None`` when the
        reader brought the scoring and the spec declares no case
        (:func:`truereward.readers.case_set_for`)."""
        if self.scoring is not None and self.spec is not None and not self.spec.cases:
            return None
        return self.spec

    def fold(self) -> FoldedRows:
        """The rows folded as the run's grade document folds them
        (:func:`~truereward.grade.document.fold_rows`): ``folded`` when
        :meth:`with_fold` kept it, else folded now."""
        if self.folded is not None:
            return self.folded
        return fold_rows(
            self.rows, case_set=self.case_set, scheme=self.job.settings.scheme, scoring=self.scoring
        )

    def with_fold(self) -> RunReading:
        """This reading with :meth:`fold` kept in ``folded``, so that the
        retry decision and the document fold the rows once; the same reading
        when there is nothing to fold (a refusal, a kept grade)."""
        if self.stored is not None or self.refusal is not None or self.folded is not None:
            return self
        return replace(self, folded=self.fold())

    def refusals(self) -> list[Refusal]:
        """The refusals this reading folds to (empty: gradable)."""
        if self.stored is not None:
            return list(self.stored.refusals)
        if self.refusal is not None:
            return [self.refusal]
        return self.fold().refusals

    def as_attempt(self, refusals: list[Refusal] | None = None) -> Attempt:
        """This reading as an earlier attempt of the run's document."""
        found = self.refusals() if refusals is None else refusals
        return Attempt(
            attempt=self.attempt,
            gradable=not found,
            refusals=found,
            started=self.started,
            finished=self.finished,
        )

    def with_history(self, history: list[Attempt] | tuple[Attempt, ...]) -> RunReading:
        """The same reading after the earlier attempts ``history``."""
        return replace(self, history=tuple(history))


def load_spec(job: RunJob) -> TaskSpec:
    """The run's task spec: the inline case set, or the file ``case_set``
    names inside the run. Raises :class:`~truereward.codes.Ungradable`."""
    from ..readers import Evidence
    from ..record.taskspec import MAX_SPEC_BYTES, TaskSpec, TaskSpecError

    source = job.settings.case_set
    if not isinstance(source, str):
        return source
    location = Evidence(
        url=job.inside(source),
        storage_options=job.settings.storage_options,
        root=job.url,
        max_bytes=MAX_SPEC_BYTES,
    )
    try:
        data = location.read_bytes()
    except Ungradable as error:
        if error.code == "EVIDENCE_UNREADABLE":
            raise
        raise Ungradable("CASE_INVALID", f"task spec: {error.why}") from None
    try:
        return TaskSpec.parse(data, name=location.describe(), toml=source.endswith(".toml"))
    except TaskSpecError as error:
        raise Ungradable("CASE_INVALID", f"task spec {error}") from None


def definition_of(job: RunJob, spec: TaskSpec, reader: str, evidence: str) -> str:
    """The sha256 of what ``job``'s run is graded with besides its evidence:
    the task ``spec`` as loaded, the ``reader``'s name, the ``evidence``
    path, the request's reader options and scheme, and this library's
    version (its readers are part of it). Pure."""
    import hashlib

    from .._version import __version__
    from ..util.strictjson import canonical_bytes

    settings = job.settings
    value = {
        "spec": spec.model_dump(mode="json"),
        "reader": reader,
        "evidence": evidence,
        "options": settings.options,
        "scheme": settings.scheme,
        "grader": __version__,
    }
    return hashlib.sha256(canonical_bytes(value, finite=True)).hexdigest()


def current_definition(job: RunJob) -> str | None:
    """:func:`definition_of` ``job``'s run as it is now (its task spec read
    again); ``None`` when the spec or the reader cannot be had (the run's
    grade then records none either)."""
    try:
        spec = load_spec(job)
        reader, where = reader_and_evidence(job, spec)
    except Ungradable:
        return None
    return definition_of(job, spec, reader.name, where)


def reader_and_evidence(job: RunJob, spec: TaskSpec) -> tuple[Reader, str]:
    """The reader of ``job``'s run and its evidence's path inside the run:
    the request's, else the task spec's, else the reader's default.
    :class:`~truereward.codes.Ungradable` (``CASE_INVALID``) when no reader
    is named or the name is unknown."""
    from ..readers import get_reader
    from ..util.exceptions import UnknownName

    settings = job.settings
    name = settings.reader or spec.reader
    if name is None:
        raise Ungradable(
            "CASE_INVALID", "no reader: the request names none and neither does the task spec"
        )
    try:
        reader = get_reader(name)
    except UnknownName as error:
        raise Ungradable("CASE_INVALID", str(error)) from None
    return reader, settings.evidence or spec.evidence or reader.default_evidence


#: The largest evidence file read ahead of its task spec; a larger one is
#: read once the spec says where it is (a second request on S3).
PREFETCH_BYTES = 4 << 20

#: Where the evidence of the last run read lay, by the settings it was read
#: with: the place the next run's evidence is read from ahead of its spec
#: (``""``: its reader reads no single file there, a directory say, so
#: nothing is read ahead). Forgotten past :data:`_REMEMBERED` settings, as
#: a long-lived worker grades request after request.
_LAST_EVIDENCE: dict[int, str] = {}
_REMEMBERED = 64


def _ahead(job: RunJob) -> tuple[str, Future[tuple[int, bytes | None]]] | None:
    """On S3, the GET of the evidence where it most likely is (the
    request's ``evidence``, else where the last run's was), started before
    the task spec is read, so the run's two reads are one round trip: the
    place guessed, and the GET under way. ``None`` elsewhere, or with no
    guess yet."""
    from ..util.fetch import prefetch
    from ..util.urls import is_local

    settings = job.settings
    guess = _LAST_EVIDENCE.get(id(settings), settings.evidence)
    if not guess or is_local(job.url):
        return None
    try:
        from fsspec.core import url_to_fs

        fs, path = url_to_fs(job.inside(guess), **settings.storage_options)
    except (ImportError, ValueError, TypeError, OSError):
        return None
    started = prefetch(fs, path, PREFETCH_BYTES)
    return None if started is None else (guess, started)


def _read(
    job: RunJob, digests: list[EvidenceDigest], definition: list[str]
) -> tuple[TaskSpec, list[CaseResult], Scoring | None]:
    """The spec, rows and (when the evidence declares it) scoring of
    ``job``'s run; the digests of every evidence file read go to
    ``digests``, and the run's :func:`definition_of` to ``definition``,
    also when the reader refuses."""
    from ..readers import Evidence, read_with_evidence

    settings = job.settings
    ahead = _ahead(job)
    spec = load_spec(job)
    reader, where = reader_and_evidence(job, spec)
    definition.append(definition_of(job, spec, reader.name, where))
    evidence = Evidence(
        url=job.inside(where),
        storage_options=settings.storage_options,
        root=job.url,
        prefetched=ahead[1] if ahead is not None and ahead[0] == where else None,
    )
    offered = evidence.prefetched is not None
    try:
        reading = read_with_evidence(reader, evidence, spec, **settings.options)
    finally:
        digests.extend(evidence.digests)  # named relative to the run (Evidence.describe)
        untaken = offered and evidence.prefetched is not None
        _remember(id(settings), "" if untaken else where)
    return spec, reading.rows, reading.scoring


def _remember(settings: int, where: str) -> None:
    """Note where the evidence of runs read with ``settings`` lies; once a
    read ahead went untaken (the reader reads no single file there), none
    is read ahead again for them."""
    if _LAST_EVIDENCE.get(settings) == "":
        return
    if settings not in _LAST_EVIDENCE and len(_LAST_EVIDENCE) >= _REMEMBERED:
        _LAST_EVIDENCE.clear()
    _LAST_EVIDENCE[settings] = where


def kept(job: RunJob) -> RunReading:
    """The reading of a run whose standing grade is kept: that grade."""
    if job.standing is None:
        raise ValueError(f"run {job.run}: no standing grade is kept")
    now = datetime.now(UTC)
    attempt = job.standing.run.attempt if job.standing.run is not None else 1
    return RunReading(job=job, attempt=attempt, started=now, finished=now, stored=job.standing)


def _crashed(job: RunJob, error: Exception) -> Ungradable:
    """``CASE_NOT_GRADED`` for an exception nothing expected while reading
    ``job``'s run (module docstring)."""
    said = f"{type(error).__name__}: {error}"
    return Ungradable("CASE_NOT_GRADED", f"reading run {job.run} failed: {said[:1000]}")


def read_run(job: RunJob, attempt: int = 1) -> RunReading:
    """Attempt ``attempt`` (from 1, counted over every flow run that graded
    the run) at reading ``job``'s run; see the module docstring."""
    started = datetime.now(UTC)
    digests: list[EvidenceDigest] = []
    definition: list[str] = []
    spec: TaskSpec | None = None
    rows: list[CaseResult] = []
    scoring: Scoring | None = None
    refusal: Refusal | None = None
    with attempt_scope(attempt):
        try:
            spec, rows, scoring = _read(job, digests, definition)
        except Exception as error:  # noqa: BLE001 - a surprise is this run's, not its chunk's
            refusal = from_ungradable(
                error if isinstance(error, Ungradable) else _crashed(job, error)
            )
    return RunReading(
        job=job,
        attempt=attempt,
        started=started,
        finished=datetime.now(UTC),
        rows=tuple(rows),
        spec=spec,
        refusal=refusal,
        evidence=tuple(digests),
        scoring=scoring,
        definition=definition[0] if definition else None,
    )
