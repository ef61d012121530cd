"""From a request to jobs: one :class:`RunJob` per run to grade.

A request names a sweep (a directory of runs) or a list of runs; each run
becomes a small :class:`RunJob` (its id, its URL, where it publishes) that
shares one :class:`GradeSettings` with the other runs of the request (the
reader, evidence, case set, options, scheme), so a sweep of thousands of
runs holds thousands of ids and URLs, not thousands of copies of the
request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from ..publishing import S3_PROTOCOLS
from ..publishing.index import listing_order
from ..util import urls
from ..util.io import LOCAL_IO, with_connections
from ..util.target import Target
from .request import GradeRequest, run_id_of

if TYPE_CHECKING:
    from ..grade.document import Attempt, GradeDocument
    from ..record.taskspec import TaskSpec

__all__ = ["DEFAULT_TARGET", "GradeSettings", "PlannedJobs", "RunJob", "plan_runs", "plan_sweep"]

#: Where a run's grade goes when the request names no target: the run's own
#: verifier logs (where a Harbor verifier's files go).
DEFAULT_TARGET = "logs/verifier"


@dataclass(frozen=True)
class GradeSettings:
    """What every run of one request shares.

    ``case_set`` is a path inside each run (a str) or one inline
    :class:`~truereward.record.taskspec.TaskSpec`; ``target`` is the URL prefix runs
    publish under (``None``: each run's own ``logs/verifier``); ``scheme``
    ``None`` folds each run under its task's scheme (:func:`truereward.fold`).
    """

    scheme: str | None
    case_set: str | TaskSpec
    reader: str | None = None
    evidence: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    storage_options: dict[str, Any] = field(default_factory=dict)
    sweep: str | None = None
    target: Target | None = None
    reward_keys: tuple[str, ...] = ()
    #: Runs whose reads or writes are in flight at once in a process
    #: (``GradeRequest.io_budget``; :mod:`truereward.util.io`).
    io_budget: int = LOCAL_IO


@dataclass(frozen=True)
class RunJob:
    """One run to grade: its id, its directory's URL, and the shared settings.

    What :func:`~truereward.grading.triage.triage` decided about the grade
    already at the run's target travels with the job:

    - ``standing``: that grade is kept (nothing is read; it is published
      again, which only repairs an interrupted publish);
    - ``replaces``: the digest of the grade this job's grade replaces (a
      regrade), ``history`` the attempts that grade records (its own
      last), and ``after`` their count: this job's attempts are numbered
      from ``after + 1``;
    - ``confirm``: the grade standing in the run's own directory, where the
      graded agent could have written it: the run is graded again and that
      grade is kept only if the new one agrees with it
      (:func:`truereward.grade.trust.disagreement`); otherwise the new grade
      replaces it and it is set aside as ``grade.previous.json``;
    - ``distrusted``: why the ``grade.json`` standing in the run's own
      directory is not a grade at all (not a grade document): the job's
      grade replaces it (``replaces``) and sets it aside;
    - ``listing``: on an object store, our objects at the run's target and
      their ETags, from the listing of the sweep's targets made when it was
      planned (:class:`~truereward.publishing.index.TargetIndex`), handed to
      the publisher so it need not list again.
    """

    run: str
    url: str
    settings: GradeSettings
    standing: GradeDocument | None = None
    replaces: str | None = None
    history: tuple[Attempt, ...] = ()
    after: int = 0
    confirm: GradeDocument | None = None
    distrusted: str | None = None
    listing: Mapping[str, str] | None = None

    @property
    def in_place(self) -> bool:
        """Whether the run publishes into its own directory (where the graded
        agent could have written files before the verifier ran)."""
        return self.settings.target is None

    @property
    def target(self) -> Target:
        """Where this run's grade is published."""
        base = self.settings.target
        if base is None:
            return Target(
                url=urls.join(self.url, DEFAULT_TARGET),
                storage_options=dict(self.settings.storage_options),
            )
        return base.child(self.run)

    def inside(self, relative: str) -> str:
        """The URL of ``relative`` inside the run directory."""
        return urls.join(self.url, relative)


class PlannedJobs(Sequence[RunJob]):
    """The jobs of a plan, each made when it is taken: the plan keeps one
    string per run (its name in the sweep, or its URL), and ``make`` turns
    one into its :class:`RunJob`. A list of whole jobs, held by the flow
    process from start to end, made its peak grow with the sweep
    (``infra/bench/grade_run.py``; figures in docs/scale.md)."""

    __slots__ = ("_entries", "_make")

    def __init__(self, entries: Sequence[str], make: Callable[[str], RunJob]) -> None:
        self._entries = tuple(entries)
        self._make = make

    def __len__(self) -> int:
        return len(self._entries)

    @overload
    def __getitem__(self, index: int) -> RunJob: ...

    @overload
    def __getitem__(self, index: slice) -> list[RunJob]: ...

    def __getitem__(self, index: int | slice) -> RunJob | list[RunJob]:
        if isinstance(index, slice):
            return [self._make(entry) for entry in self._entries[index]]
        return self._make(self._entries[index])

    def __iter__(self) -> Iterator[RunJob]:
        return map(self._make, self._entries)


def _url_order(url: str) -> bytes:
    return listing_order(run_id_of(url))


def settings_for(request: GradeRequest, target: Target | None = None) -> GradeSettings:
    """The shared settings of ``request``; ``target`` (a loaded target block)
    overrides ``request.target``."""
    from ..record.taskspec import TaskSpec

    reading = dict(request.storage_options)
    if target is None and request.target is not None:
        target = Target(url=request.target, storage_options=dict(request.storage_options))
    elif (
        target is not None
        and request.sweep is not None
        and urls.protocol(request.sweep) == target.protocol != "file"
    ):
        # The sweep lies on the target's store: read it with the target's
        # options (its credentials, from a block).
        reading = {**target.options(), **reading}
    budget = request.io_budget
    places = [request.sweep, *(request.runs or ())]
    if any(place is not None and urls.protocol(place) in S3_PROTOCOLS for place in places):
        reading = with_connections(reading, budget)
    if target is not None and target.protocol in S3_PROTOCOLS:
        target = target.model_copy(
            update={"storage_options": with_connections(target.storage_options, budget)}
        )
    return GradeSettings(
        scheme=request.scheme,
        case_set=request.case_set
        if isinstance(request.case_set, str)
        else TaskSpec.of(request.case_set),
        reader=request.reader,
        evidence=request.evidence,
        options=dict(request.options),
        storage_options=reading,
        sweep=request.sweep_label,
        target=target,
        reward_keys=tuple(request.reward_keys),
        io_budget=budget,
    )


def options_for(where: str, request: GradeRequest, target: Target | None) -> dict[str, Any]:
    """The storage options to open ``where`` with, a file written beside the
    grades (the sweep report): the target block's, else the request's, with
    the connection pool :func:`settings_for` gives an S3 store, so that the
    flow's one client for that store (fsspec keeps an instance per distinct
    options) serves it too, not a second one loaded for one request."""
    options = target.options() if target is not None else dict(request.storage_options)
    if urls.protocol(where) in S3_PROTOCOLS:
        options = with_connections(options, request.io_budget)
    return options


def plan_runs(request: GradeRequest, target: Target | None = None) -> PlannedJobs:
    """The jobs of :func:`plan_sweep` (the entries that are not runs left
    out)."""
    return plan_sweep(request, target)[0]


def plan_sweep(
    request: GradeRequest, target: Target | None = None
) -> tuple[PlannedJobs, list[tuple[str, str]]]:
    """One job per run of ``request``, in the order an object store lists
    the runs' keys (:func:`~truereward.publishing.index.listing_order`, by
    run id; the listing of their targets then advances with the plan), and
    every entry that is not graded,
    with why: an entry of the sweep that is not a run (a symlink, a name
    starting with ``.``: :meth:`~truereward.sweeps.SweepSource.scan`), a
    directory whose name cannot be a run id (``...``, a backslash, a
    newline, surrounding whitespace), a listed run that is a symlink. A
    sweep that does not exist raises :class:`~truereward.sweeps.SweepNotFound`."""
    import os

    settings = settings_for(request, target)
    skipped: list[tuple[str, str]] = []
    if request.runs is not None:
        listed = []
        for url in request.runs:
            local = urls.local_or_none(url)
            if local is not None and os.path.islink(local.rstrip("/")):
                skipped.append((url, "a symlink: a run is a real directory"))
                continue
            run_id_of(url)  # a listed run that cannot be a run id is refused here
            listed.append(url)

        def listed_job(url: str) -> RunJob:
            return RunJob(run=run_id_of(url), url=url, settings=settings)

        return PlannedJobs(sorted(listed, key=_url_order), listed_job), skipped
    from ..sweeps.source import SweepSource

    sweep = request.sweep
    if sweep is None:  # the request's own validation makes this unreachable
        raise ValueError("the request names neither a sweep nor runs")
    names, skipped = SweepSource(sweep, settings.storage_options).scan()
    runs = []
    for name in sorted(names, key=listing_order):
        try:
            run_id_of(name)
        except ValueError as error:
            skipped.append((name, f"not a run id: {error}"))
            continue
        runs.append(name)

    def sweep_job(name: str) -> RunJob:
        return RunJob(run=name, url=urls.join(sweep, name), settings=settings)

    return PlannedJobs(runs, sweep_job), sorted(skipped)
