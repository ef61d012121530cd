"""The published files of one grade, and their bytes.

``grade.json`` always; the CTRF view always (``ctrf.json``, or
``grade-ctrf.json`` when ``ctrf.json`` is the evidence or another tool's:
:func:`ctrf_view_for`); only when gradable, ``reward-details.json`` (for a
task that declares a scoring), ``reward.json`` and ``reward.txt``, last.
:func:`render` gives the bodies in write order, :data:`REWARD_FILES` the
order stale reward files are removed in, :data:`NAMES` every name we write.
README.md, "File formats", and docs/scoring.md, "What is published", say what each holds.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from typing import Any

from ..folding.weighing import case_value
from ..record.cases import CaseResult
from ..record.scoring import Dimension, Member
from ..util import safefile, urls
from ..util.strictjson import canonical_bytes
from .ctrfreport import ctrf
from .document import GradeDocument, Publication

__all__ = [
    "CTRF",
    "GRADE",
    "GRADE_CTRF",
    "NAMES",
    "PREVIOUS_GRADE",
    "REWARD_DETAILS",
    "REWARD_FILES",
    "REWARD_JSON",
    "REWARD_TXT",
    "WRITE_ORDER",
    "ctrf_view_for",
    "render",
    "reward_details",
    "reward_json",
    "reward_txt",
]

GRADE = "grade.json"
CTRF = "ctrf.json"
#: Where our CTRF view goes when ``ctrf.json`` is not ours to write.
GRADE_CTRF = "grade-ctrf.json"
REWARD_JSON = "reward.json"
#: rewardkit's details file, published beside ``reward.json`` for a grade
#: with a declared scoring.
REWARD_DETAILS = "reward-details.json"
REWARD_TXT = "reward.txt"
WRITE_ORDER = (GRADE, CTRF, REWARD_DETAILS, REWARD_JSON, REWARD_TXT)
REWARD_FILES = (REWARD_TXT, REWARD_JSON, REWARD_DETAILS)
#: Every name a grade of ours may write (either CTRF view).
NAMES = (GRADE, CTRF, GRADE_CTRF, REWARD_DETAILS, REWARD_JSON, REWARD_TXT)
#: Where a grading session sets the grade it found aside
#: (:mod:`truereward.publishing.session`).
PREVIOUS_GRADE = "grade.previous.json"


def reward_json(document: GradeDocument) -> dict[str, float | int]:
    """The flat ``reward.json`` object of a gradable document: ``reward``,
    then the figures ``publication.reward_keys`` names (module docstring).
    ``ValueError`` for an ungradable document, which has no reward file."""
    if not document.gradable or document.reward is None:
        raise ValueError("an ungradable grade has no reward.json")
    out: dict[str, float | int] = {"reward": document.reward}
    scoring = document.inputs.scoring
    for name in scoring.publish if scoring is not None else ():
        value = document.dimensions.get(name)
        if value is None:  # a gradable grade values every dimension
            raise ValueError(f"dimension {name} has no value in a gradable grade")
        out[name] = value
    for key in document.publication.reward_keys:
        if key == "guards_hold":
            out[key] = int(document.guards_hold)
        else:
            value = getattr(document, key)
            if value is not None:
                out[key] = value
    if not all(math.isfinite(value) for value in out.values()):
        raise ValueError(f"reward.json values must be finite numbers, got {out}")
    return out


def reward_txt(document: GradeDocument) -> bytes:
    """The ``reward.txt`` bytes of a gradable document (``b"1.0\\n"``)."""
    if not document.gradable or document.reward is None:
        raise ValueError("an ungradable grade has no reward.txt")
    return f"{float(document.reward)!r}\n".encode("ascii")


def _aggregation(scheme: str) -> str:
    """rewardkit's name of a scheme's aggregation (``weighted-mean/1`` is
    its ``weighted-mean``); other schemes keep their names."""
    return scheme.rsplit("/", 1)[0]


def _criterion(row: CaseResult | None, member: Member | None, value: float) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": row.id if row is not None else "",
        "value": value,
        "raw": value,
        "weight": member.weight if member is not None else 1.0,
    }
    if member is not None and not member.required:
        out["optional"] = True
    if row is not None and row.why:
        out["reasoning"] = row.why
    return out


def reward_details(document: GradeDocument) -> dict[str, Any]:
    """The ``reward-details.json`` object of a gradable document with a
    declared scoring, in rewardkit's shape: one entry per key of
    ``reward.json`` that is a dimension (``reward``, the primary, and the
    published ones). An entry whose members are all cases is a component
    (``score``, ``kind: "programmatic"``, ``aggregation``, ``criteria``: each
    case's ``name`` (its id), ``value``, ``raw``, ``weight``, ``optional``
    when not required, ``reasoning`` (its why)); one with dimensions among
    its members is a ``group`` (``components``: ``name``, ``weight``,
    ``detail``). Without dimensions, ``reward`` is one component over every
    case. Values are the grade's, unrounded unless a dimension rounds.
    ``ValueError`` for an ungradable document or one without a scoring."""
    scoring = document.inputs.scoring
    if not document.gradable or document.reward is None or scoring is None:
        raise ValueError("only a gradable grade with a declared scoring has reward details")
    rows = {row.id: row for row in document.detail}
    threshold = "threshold/1"

    def criteria(members: Iterable[tuple[CaseResult, Member | None]]) -> list[dict[str, Any]]:
        return [_criterion(row, member, case_value(row)) for row, member in members]

    if not scoring.dimensions:
        weights, optional = scoring.weights, set(scoring.optional)
        listed = [
            (
                row,
                Member(
                    case=row.id, weight=weights.get(row.id, 1.0), required=row.id not in optional
                ),
            )
            for row in document.detail
        ]
        flat: dict[str, Any] = {
            "score": document.reward,
            "kind": "programmatic",
            "aggregation": _aggregation(document.scheme),
            "criteria": criteria(listed),
        }
        if document.scheme == threshold:
            flat["threshold"] = 0.5 if scoring.threshold is None else scoring.threshold
        return {"reward": flat}

    def detail(dimension: Dimension) -> dict[str, Any]:
        score = document.dimensions[dimension.name]
        out: dict[str, Any] = {"score": score, "aggregation": _aggregation(dimension.scheme)}
        if dimension.scheme == threshold:
            out["threshold"] = 0.5 if dimension.threshold is None else dimension.threshold
        if all(member.case is not None for member in dimension.members):
            out["kind"] = "programmatic"
            out["criteria"] = criteria((rows[str(m.case)], m) for m in dimension.members)
            return out
        out["kind"] = "group"
        out["components"] = [
            {
                "name": member.name,
                "weight": member.weight,
                "detail": detail(scoring.dimension(member.dimension))
                if member.dimension is not None
                else {
                    "score": case_value(rows[member.name]),
                    "kind": "programmatic",
                    "criteria": criteria([(rows[member.name], member)]),
                },
            }
            for member in dimension.members
        ]
        return out

    details = {"reward": detail(scoring.dimension(str(scoring.primary)))}
    for name in scoring.publish:
        details[name] = detail(scoring.dimension(name))
    return details


def _floats(value: Any) -> list[float]:
    """Every float in a JSON value (what canonical_bytes is told to expect)."""
    if isinstance(value, float):
        return [value]
    if isinstance(value, dict):
        return [item for inner in value.values() for item in _floats(inner)]
    if isinstance(value, list):
        return [item for inner in value for item in _floats(inner)]
    return []


def render(document: GradeDocument) -> dict[str, bytes]:
    """The files of ``document`` in write order: ``grade.json``, the CTRF
    view under its name, and the reward files only when it is gradable
    (``reward-details.json`` only with a declared scoring; ``reward.txt``
    last)."""
    bodies = {
        GRADE: document.to_bytes(),
        # The view's floats are the reward and the dimensions' values
        # (ctrfreport's docstring).
        document.publication.ctrf: canonical_bytes(
            ctrf(document),
            finite=True,
            floats=(document.reward, *document.dimensions.values()),
        ),
    }
    if document.gradable:
        if document.inputs.scoring is not None:
            details = reward_details(document)
            bodies[REWARD_DETAILS] = canonical_bytes(details, finite=True, floats=_floats(details))
        bodies[REWARD_JSON] = canonical_bytes(reward_json(document), finite=True)
        bodies[REWARD_TXT] = reward_txt(document)
    return bodies


def _same_place(left: str, right: str) -> bool:
    here, there = urls.local_or_none(left), urls.local_or_none(right)
    if here is None or there is None:
        return left.rstrip("/") == right.rstrip("/")
    return safefile.same_file(here, there)


def ctrf_view_for(
    target: str, evidence: Iterable[str], publication: Publication | None = None
) -> Publication:
    """``publication`` (default: the default layout) with the CTRF view
    moved to ``grade-ctrf.json`` when one of ``evidence`` (paths or URLs
    read for the grade) is the ``ctrf.json`` of ``target``, so publishing
    keeps the evidence."""
    chosen = publication or Publication()
    local = urls.local_or_none(target)
    here = urls.join(target, CTRF) if local is None else os.path.join(local, CTRF)
    if any(_same_place(path, here) for path in evidence):
        return chosen.model_copy(update={"ctrf": GRADE_CTRF})
    return chosen
