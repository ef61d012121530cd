"""Readers: one kind of evidence plus a task's case set in, rows out.

A reader has a ``name``, a ``default_evidence`` and ``read(evidence, spec,
options) -> list[CaseResult]``, and raises
:class:`~truereward.codes.Ungradable` for evidence it cannot grade. Readers
are found by name through the entry-point group ``truereward.readers``;
:func:`read` is the one way to run one (a crash is ``CASE_NOT_GRADED``). A
reader may bring the task's scoring (:class:`Scored`). docs/readers.md, "A
reader", gives the protocol.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..codes import Ungradable
from ..util.registry import Registry
from .evidence import Evidence

if TYPE_CHECKING:
    from ..grade.document import EvidenceDigest, GradeDocument
    from ..record.cases import CaseResult
    from ..record.scoring import Scoring
    from ..record.taskspec import TaskSpec

__all__ = [
    "ENTRY_POINT_GROUP",
    "Evidence",
    "Reader",
    "ReaderOptions",
    "Reading",
    "Scored",
    "case_set_for",
    "get_reader",
    "grade_evidence",
    "read",
    "read_with_evidence",
    "reader_names",
]

#: The entry-point group readers are found through.
ENTRY_POINT_GROUP = "truereward.readers"


@runtime_checkable
class Reader(Protocol):
    """One kind of evidence."""

    #: The registry name (``ctrf``, ``junit``...).
    name: str
    #: Where the evidence usually lies inside a run directory.
    default_evidence: str

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult] | Scored:
        """Rows for the declared cases (with the scoring the evidence
        declares, as :class:`Scored`), or raise Ungradable."""
        ...


@dataclass(frozen=True)
class Scored:
    """A reader's answer when the evidence declares the task's scoring: the
    rows, and that scoring (weights, aggregations, dimensions)."""

    rows: list[CaseResult]
    scoring: Scoring


class ReaderOptions(dict[str, Any]):
    """A reader's options: the task spec's, with the caller's over them;
    ``from_caller`` names the keys the caller gave."""

    def __init__(self, spec: Mapping[str, Any], caller: Mapping[str, Any]) -> None:
        super().__init__({**spec, **caller})
        self.from_caller = frozenset(caller)


@dataclass(frozen=True)
class Reading:
    """What a reader produced: rows, the digests of the evidence read, and
    the scoring the evidence declared (``None``: the task spec's, if any)."""

    rows: list[CaseResult]
    evidence: list[EvidenceDigest]
    scoring: Scoring | None = None


def case_set_for(spec: TaskSpec, reading: Reading) -> TaskSpec | None:
    """The case set to fold ``reading`` with: ``spec``, or ``None`` when the
    reader brought the scoring and the spec declares no case (the scoring's
    dimensions then name the cases: :mod:`truereward.folding.weighing`)."""
    if reading.scoring is not None and not spec.cases:
        return None
    return spec


def _checked(name: str, value: Any) -> Reader:
    """``value`` (a reader, or a class whose instance is one) as the reader
    named ``name``; ``TypeError`` when it is not one."""
    found = value() if isinstance(value, type) else value
    if not isinstance(found, Reader):
        raise TypeError(f"{type(found).__name__} is not a reader (name, default_evidence, read)")
    return found


def _import_path(name: str) -> str | None:
    """The entry-point value of a reader named by its import path
    (``package.module:ATTRIBUTE``; ``package.module:`` is its ``READER``),
    or ``None`` for a name without a colon."""
    if ":" not in name:
        return None
    return f"{name}READER" if name.endswith(":") else name


_READERS: Registry[Reader] = Registry(
    "reader",
    ENTRY_POINT_GROUP,
    check=_checked,
    fallback=_import_path,
)


def reader_names() -> list[str]:
    """Every reader name known in this process, sorted: the entry points
    (loaded or not), never an import path."""
    return _READERS.names()


def get_reader(name: str) -> Reader:
    """The reader registered as ``name`` (or importable as
    ``package.module:ATTRIBUTE``); :class:`~truereward.util.exceptions.UnknownName`
    listing the known names otherwise, or saying why it cannot be loaded."""
    return _READERS.get(name)


def _evidence(evidence: str | Evidence, storage_options: Mapping[str, Any] | None) -> Evidence:
    """``evidence`` as an :class:`Evidence` (itself when it already is one;
    ``storage_options`` apply to a path or URL only)."""
    if isinstance(evidence, Evidence):
        return evidence
    return Evidence(url=str(evidence), storage_options=dict(storage_options or {}))


def read_with_evidence(
    reader: str | Reader,
    evidence: str | Evidence,
    case_set: object,
    *,
    storage_options: Mapping[str, Any] | None = None,
    **options: Any,
) -> Reading:
    """Run ``reader`` on ``evidence`` (a path, an fsspec URL or an
    :class:`Evidence`) for ``case_set`` (as for :func:`truereward.fold`, or a
    :class:`~truereward.record.taskspec.TaskSpec`); ``options`` go to the reader.

    Raises :class:`~truereward.codes.Ungradable`: the reader's own refusals,
    ``CASE_INVALID`` for a case set that is not valid, and
    ``CASE_NOT_GRADED`` when the reader crashed or answered with something
    other than a list of rows. :class:`~truereward.util.exceptions.UnknownName` for an unknown name.
    """
    from ..record.cases import CaseResult
    from ..record.taskspec import TaskSpec, TaskSpecError

    chosen = reader if not isinstance(reader, str) else get_reader(reader)
    try:
        spec = TaskSpec.of(case_set)
    except (TaskSpecError, TypeError) as error:
        raise Ungradable("CASE_INVALID", f"the case set is not valid: {error}") from None
    source = _evidence(evidence, storage_options)
    merged = ReaderOptions(spec.options, options)
    try:
        answer = chosen.read(source, spec, merged)
    except Ungradable:
        raise
    except Exception as error:  # a reader bug is the grader's fault
        raise Ungradable(
            "CASE_NOT_GRADED",
            f"reader {chosen.name} crashed on {source.describe()}: {type(error).__name__}: {error}",
        ) from error
    scoring = None
    rows: object = answer
    if isinstance(answer, Scored):
        rows, scoring = answer.rows, answer.scoring
        if spec.resolved_scoring is not None:
            raise Ungradable(
                "CASE_INVALID",
                f"reader {chosen.name} reads the task's scoring from its evidence, and the "
                "task spec declares a scoring too (weights, required cases or a [scoring] "
                "table): declare it in one place",
            )
    if not isinstance(rows, list) or not all(isinstance(row, CaseResult) for row in rows):
        raise Ungradable(
            "CASE_NOT_GRADED",
            f"reader {chosen.name} answered with "
            f"{type(rows).__name__}, not a list of CaseResult rows",
        )
    return Reading(rows=rows, evidence=list(source.digests), scoring=scoring)


def read(
    reader: str | Reader,
    evidence: str | Evidence,
    case_set: object,
    *,
    storage_options: Mapping[str, Any] | None = None,
    **options: Any,
) -> list[CaseResult]:
    """The rows of :func:`read_with_evidence`."""
    return read_with_evidence(
        reader, evidence, case_set, storage_options=storage_options, **options
    ).rows


def grade_evidence(
    reader: str | Reader,
    evidence: str | Evidence,
    case_set: object,
    *,
    scheme: str | None = None,
    run: Mapping[str, Any] | None = None,
    attempts: Iterable[Any] = (),
    storage_options: Mapping[str, Any] | None = None,
    publication: Mapping[str, Any] | None = None,
    **options: Any,
) -> GradeDocument:
    """Read ``evidence`` with ``reader`` and build the grade document
    (``publication``: how its files are laid out, see
    :class:`~truereward.grade.document.Publication`).

    When the reader refuses the evidence as a whole (it is missing,
    malformed or unreadable), the document holds that refusal alone: the
    declared cases are not also reported missing, since they are missing
    because of it, and the refusal's blame stays the one that matters. The
    digests of the files read before the refusal (a malformed report was
    read whole) are in the document all the same; a missing file has none.
    ``scheme`` as for :func:`truereward.fold` (``None``: the task's).
    :class:`~truereward.util.exceptions.UnknownName` and an unknown scheme raise.
    """
    from ..grade.document import grade_document
    from ..record.taskspec import TaskSpec

    source = _evidence(evidence, storage_options)
    try:
        reading = read_with_evidence(reader, source, case_set, **options)
    except Ungradable as refused:
        return grade_document(
            [],
            scheme=scheme,
            run=run,
            refusals=[refused],
            attempts=attempts,
            evidence=source.digests,
            publication=publication,
        )
    spec = TaskSpec.of(case_set)  # read_with_evidence has validated it
    return grade_document(
        reading.rows,
        case_set=case_set_for(spec, reading),
        scheme=scheme,
        run=run,
        evidence=reading.evidence,
        attempts=attempts,
        publication=publication,
        scoring=reading.scoring,
    )
