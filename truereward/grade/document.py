"""The grade document (``grade.json``): one run's fold, its rows and where it
came from.

:func:`grade_document` folds the rows into a :class:`GradeDocument`, a
versioned, strict model whose canonical bytes
(:meth:`GradeDocument.to_bytes`) and their sha256
(:attr:`GradeDocument.digest`) name the grade; it keeps what folding it
again needs, adds no timestamp of its own, and is never larger than what
``truereward verify`` reads (:func:`publishable`). docs/design.md, "From
evidence to published reward" and "Immutable records", describes it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from operator import attrgetter
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from .._version import __version__
from ..codes import Ungradable
from ..folding import (
    Fold,
    FoldInputs,
    Scheme,
    fold_fields,
    prepare_inputs,
    validate_rows,
)
from ..record.cases import CaseResult, CheckAnswer
from ..record.refusal import Refusal, outlook, refusal
from ..record.scoring import Scoring
from ..util import safefile
from ..util.frozen import Items
from ..util.segments import check_segment
from ..util.strictjson import canonical_bytes, loads
from .bounded import bounded_row
from .versions import READ_VERSIONS, SCHEMA_VERSION, SCORING_VERSION, SchemaVersion

__all__ = [
    "GRADER_NAME",
    "MAX_DOCUMENT_BYTES",
    "READ_VERSIONS",
    "REWARD_KEYS",
    "SCHEMA_VERSION",
    "SCORING_VERSION",
    "Attempt",
    "EvidenceDigest",
    "FoldedRows",
    "GradeDocument",
    "Grader",
    "Publication",
    "RewardKey",
    "RunInfo",
    "SchemaVersion",
    "digest_file",
    "document_of",
    "fold_rows",
    "grade_document",
    "publishable",
]

GRADER_NAME = "truereward"

#: The largest grade document made: what ``truereward verify``, the
#: publishers and the sweep tools read (:data:`truereward.util.safefile.LIMIT`).
MAX_DOCUMENT_BYTES = safefile.LIMIT

_STRICT = ConfigDict(frozen=True, strict=True, extra="forbid", allow_inf_nan=False)


def _utc(value: datetime) -> datetime:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("a timestamp must carry a time zone (UTC)")
    return value.astimezone(UTC)


#: A timezone-aware timestamp, stored in UTC (``2026-11-30T10:06:44Z``).
UTCTime = Annotated[datetime, AfterValidator(_utc)]
Segment = Annotated[str, AfterValidator(check_segment)]


class Grader(BaseModel):
    """Who folded and wrote the document."""

    model_config = _STRICT

    name: str = GRADER_NAME
    version: str = __version__


class RunInfo(BaseModel):
    """What is known about the graded run. ``id`` and ``sweep`` become path
    segments when publishing, so they are validated as such (no ``/``, no
    ``..``, no control characters). ``attempt`` counts from 1."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    id: Segment | None = None
    sweep: Segment | None = None
    attempt: Annotated[int, Field(ge=1, strict=True)] = 1
    started: UTCTime | None = None
    finished: UTCTime | None = None


class Attempt(BaseModel):
    """One earlier attempt at grading the run, when grading was retried:
    its number, whether it was gradable, its refusals, and when it ran."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    attempt: Annotated[int, Field(ge=1, strict=True)]
    gradable: bool
    reward: float | None = None
    refusals: Items[Refusal] = ()
    started: UTCTime | None = None
    finished: UTCTime | None = None


class EvidenceDigest(BaseModel):
    """One evidence file the grader read: where, its sha256 and its size."""

    model_config = _STRICT

    path: str
    sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
    size: Annotated[int, Field(ge=0)]


#: The figures ``reward.json`` may carry beside ``reward`` (see
#: :class:`Publication`).
RewardKey = Literal["fix_rate", "guards_hold", "case_fraction"]
REWARD_KEYS: tuple[RewardKey, ...] = ("fix_rate", "guards_hold", "case_fraction")


class Publication(BaseModel):
    """How the files beside ``grade.json`` are laid out: part of the grade,
    so that ``truereward verify`` and a republish know what to expect.

    - ``ctrf``: the name our CTRF view of the grade is published under:
      ``ctrf.json``, or ``grade-ctrf.json`` when ``ctrf.json`` in the target
      directory is not ours to write (it is the evidence the grade was read
      from, or another tool's report: pytest-json-ctrf under Harbor's task
      template). That file is then left as it is, and the grade's
      ``evidence`` digests say which file it is.
    - ``reward_keys``: the figures ``reward.json`` carries beside
      ``reward`` (default none: ``{"reward": 1.0}`` alone, which is what
      Harbor needs to compute pass@k; any extra key switches Harbor's pass@k
      off and turns its job mean into one mean per key).
    """

    model_config = _STRICT

    ctrf: Literal["ctrf.json", "grade-ctrf.json"] = "ctrf.json"
    reward_keys: Items[RewardKey] = ()


def _absent(value: object) -> bool:
    return value is None


def _default_layout(publication: Publication) -> bool:
    return publication == _PUBLICATION  # the defaults, not restated here


class GradeDocument(Fold):
    """The grade of one run (``grade.json``), schema version 3, or 4 when it
    carries the task's declared scoring (``inputs.scoring``, the fold's
    ``dimensions``; :data:`SCORING_VERSION`); version 1 documents are read
    as they are (see :data:`SCHEMA_VERSION`). The version says the shape: a
    document whose version and content disagree is refused.

    A document is a :class:`~truereward.folding.Fold` (``gradable``,
    ``reward``, ``guards_hold``, ``fix_rate``, ``case_fraction``, ``cases``,
    ``failed``, ``refusals``, ``checks``, ``scheme``) with, beside it,
    ``detail`` (the rows, sorted by id), ``inputs`` (what else the fold took),
    ``run`` (metadata), ``attempts`` (earlier attempts when grading was
    retried), ``evidence`` (digests of the files read), ``publication``
    (how the files beside it are laid out) and who wrote it.
    """

    model_config = _STRICT

    schema_version: SchemaVersion = SCHEMA_VERSION
    grader: Grader = Field(default_factory=Grader)
    inputs: FoldInputs
    detail: Items[CaseResult]
    run: RunInfo | None = None
    attempts: Items[Attempt] = ()
    evidence: Items[EvidenceDigest] = ()
    # Added after documents were first published: the default layout is
    # left out, so a document written before it keeps its bytes.
    publication: Annotated[
        Publication, Field(default_factory=Publication, exclude_if=_default_layout)
    ]
    # Recorded only on a grade refused for reasons grading again cannot heal
    # (:func:`~truereward.record.refusal.outlook` ``needs-fix``): the sha256 of the
    # task definition and reader it was made with, so that a regrade can
    # tell whether they changed since. Left out otherwise (older bytes kept).
    definition: Annotated[
        str | None, Field(default=None, pattern=r"^[0-9a-f]{64}$", exclude_if=_absent)
    ]

    @model_validator(mode="after")
    def _version_fits(self) -> GradeDocument:
        scored = self.inputs.scoring is not None or bool(self.dimensions)
        if scored and self.schema_version != SCORING_VERSION:
            raise ValueError(
                f"schema_version {self.schema_version} has no scoring or dimensions: a "
                f"document that carries them is version {SCORING_VERSION}"
            )
        if not scored and self.schema_version == SCORING_VERSION:
            raise ValueError(
                f"schema_version {SCORING_VERSION} carries the task's scoring, and "
                "inputs.scoring is absent"
            )
        return self

    @cached_property
    def _bytes(self) -> bytes:
        return canonical_bytes(self.model_dump(mode="json"), finite=True)

    def to_bytes(self) -> bytes:
        """The canonical ``grade.json`` bytes (sorted keys, 2-space indent,
        UTF-8, final newline)."""
        return self._bytes

    @cached_property
    def _digest(self) -> str:
        return hashlib.sha256(self._bytes).hexdigest()

    @property
    def digest(self) -> str:
        """sha256 (hex) of :meth:`to_bytes`: the name of this grade, given
        as ``replaces=`` to publish a grade over this one."""
        return self._digest

    @classmethod
    def from_bytes(cls, data: bytes | str) -> GradeDocument:
        """Load a stored document (strict JSON, strict schema). Raises
        :class:`~truereward.util.strictjson.StrictJSONError` (not strict JSON:
        NaN, duplicate keys, bad UTF-8) or ``pydantic.ValidationError``."""
        loads(data)  # refuses what pydantic's JSON parser would let through
        if isinstance(data, bytes) and data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        return cls.model_validate_json(data)


def digest_file(
    path: str | Path, *, name: str | None = None, limit: int = safefile.LIMIT
) -> EvidenceDigest:
    """The digest of one local evidence file, read in chunks (a regular file
    only, never through a final symlink, at most ``limit`` bytes:
    :mod:`truereward.util.safefile`; an ``OSError`` otherwise). ``name`` is the
    path written into the document (default: ``path`` as given)."""
    sha = hashlib.sha256()
    size = 0
    with safefile.opened(str(path)) as fd:
        while chunk := os.read(fd, safefile.CHUNK):
            sha.update(chunk)
            size += len(chunk)
            if size > limit:
                raise safefile.TooLarge(str(path), size, limit)
    return EvidenceDigest.model_validate(
        {"path": name if name is not None else str(path), "sha256": sha.hexdigest(), "size": size}
    )


def _row_order(row: CaseResult) -> tuple[str, bytes]:
    # Rows that share an id are ordered by their content, so the document
    # never depends on which one arrived first.
    return (row.id, canonical_bytes(row.to_row(), indent=None, finite=True))


@dataclass(frozen=True)
class FoldedRows:
    """Rows folded as a grade document folds them (:func:`fold_rows`):
    ``rows`` bounded and validated, ``inputs`` prepared, ``fields`` the
    fold's. A grader that must know a run's refusals before it builds the
    run's document folds once and gives this to :func:`document_of`."""

    rows: list[CaseResult]
    inputs: FoldInputs
    fields: Mapping[str, Any]

    @property
    def refusals(self) -> list[Refusal]:
        """The refusals of the fold (empty: gradable)."""
        return list(self.fields["refusals"])


def fold_rows(
    rows: Iterable[CaseResult | Mapping[str, Any]],
    *,
    case_set: object = None,
    scheme: str | Scheme | None = None,
    refusals: Iterable[Refusal | Ungradable | Mapping[str, Any]] = (),
    checks: Iterable[CheckAnswer | Mapping[str, Any]] = (),
    scoring: Scoring | Mapping[str, Any] | None = None,
) -> FoldedRows:
    """The first half of :func:`grade_document` (same arguments, same
    errors): each row bounded (:func:`~truereward.grade.bounded.bounded_row`)
    and the rows folded."""
    validated = [bounded_row(row) for row in validate_rows(rows)]
    inputs = prepare_inputs(case_set=case_set, checks=checks, refusals=refusals, scoring=scoring)
    return FoldedRows(validated, inputs, fold_fields(validated, inputs, scheme))


def grade_document(
    rows: Iterable[CaseResult | Mapping[str, Any]],
    *,
    case_set: object = None,
    scheme: str | Scheme | None = None,
    run: RunInfo | Mapping[str, Any] | None = None,
    evidence: Iterable[EvidenceDigest | Mapping[str, Any]] = (),
    refusals: Iterable[Refusal | Ungradable | Mapping[str, Any]] = (),
    checks: Iterable[CheckAnswer | Mapping[str, Any]] = (),
    attempts: Iterable[Attempt | Mapping[str, Any]] = (),
    publication: Publication | Mapping[str, Any] | None = None,
    scoring: Scoring | Mapping[str, Any] | None = None,
    definition: str | None = None,
) -> GradeDocument:
    """Fold ``rows`` (see :func:`truereward.fold`) and build the grade document.

    ``run`` is the run's metadata (:class:`RunInfo` or a mapping),
    ``evidence`` the digests of the evidence files read (sorted by path in the
    document), ``refusals`` and ``checks`` what the fold takes beside the rows,
    ``attempts`` the earlier attempts when grading was retried,
    ``publication`` how the files beside it are laid out (default: our CTRF
    view as ``ctrf.json``, ``reward.json`` with ``reward`` alone),
    ``scheme`` and ``scoring`` as for :func:`truereward.fold` (a task
    spec given as ``case_set`` brings its scoring; a document with one is
    version 4). ``definition``: the digest of the task definition and
    reader the grade is made with, kept only when the grade is refused for
    reasons that need a fix (``definition`` of :class:`GradeDocument`).
    Invalid rows raise ``pydantic.ValidationError`` naming the row index
    and field.
    Each row is bounded before the fold (:func:`~truereward.grade.bounded.bounded_row`);
    :func:`publishable` says whether the document fits (module docstring).
    """
    folded = fold_rows(
        rows, case_set=case_set, scheme=scheme, refusals=refusals, checks=checks, scoring=scoring
    )
    return document_of(
        folded,
        run=run,
        evidence=evidence,
        attempts=attempts,
        publication=publication,
        definition=definition,
    )


def document_of(
    folded: FoldedRows,
    *,
    run: RunInfo | Mapping[str, Any] | None = None,
    evidence: Iterable[EvidenceDigest | Mapping[str, Any]] = (),
    attempts: Iterable[Attempt | Mapping[str, Any]] = (),
    publication: Publication | Mapping[str, Any] | None = None,
    definition: str | None = None,
) -> GradeDocument:
    """The second half of :func:`grade_document`: the document of rows
    already folded (:func:`fold_rows`), the other arguments as there."""
    values = dict(folded.fields)
    detail = sorted(folded.rows, key=_ID)
    if len({row.id for row in detail}) < len(detail):
        detail.sort(key=_row_order)
    scored = folded.inputs.scoring is not None or values["dimensions"]
    values["schema_version"] = SCORING_VERSION if scored else SCHEMA_VERSION
    values["grader"] = _GRADER
    values["inputs"] = folded.inputs
    values["detail"] = detail
    values["run"] = None if run is None else RunInfo.model_validate(run)
    values["attempts"] = [Attempt.model_validate(item) for item in attempts] if attempts else ()
    values["evidence"] = (
        sorted(
            (EvidenceDigest.model_validate(item) for item in evidence),
            key=lambda item: (item.path, item.sha256),
        )
        if evidence
        else ()
    )
    values["publication"] = (
        _PUBLICATION if publication is None else Publication.model_validate(publication)
    )
    blamed = ((item.code, item.blame.value) for item in values["refusals"])
    if definition is not None and outlook(blamed) == "needs-fix":
        values["definition"] = definition
    return GradeDocument.model_validate(values)


def publishable(document: GradeDocument) -> GradeDocument:
    """``document`` when its bytes fit in :data:`MAX_DOCUMENT_BYTES`; else
    the grade that takes its place: a ``CASE_INVALID`` refusal saying how
    large it would have been, with the same run, evidence, attempts and
    layout (no rows, no case set: they are what made it too large).
    :func:`truereward.publish` refuses a document over the limit; the
    graders publish this one instead."""
    size = len(document.to_bytes())
    if size <= MAX_DOCUMENT_BYTES:
        return document
    why = (
        f"the grade of these {len(document.detail)} rows would be {size} bytes, more than "
        f"the {MAX_DOCUMENT_BYTES} bytes a grade document may have (what truereward verify "
        "reads), so the rows and the case set are left out"
    )
    return grade_document(
        [],
        scheme=document.scheme,
        run=document.run,
        evidence=document.evidence,
        refusals=[refusal("CASE_INVALID", why)],
        attempts=document.attempts,
        publication=document.publication,
    )


_ID = attrgetter("id")
_GRADER = Grader()
_PUBLICATION = Publication()
