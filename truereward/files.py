"""The published files of one grade, and their bytes.

In a verifier's logs directory (or under an object-store prefix):

- ``grade.json``: always; the whole :class:`~truereward.document.GradeDocument`.
- ``ctrf.json``: always; our CTRF view of the grade (:mod:`truereward.ctrfreport`).
  When ``ctrf.json`` there is the evidence the grade was read from, or
  another tool's report (pytest-json-ctrf under Harbor's task template), the
  view is ``grade-ctrf.json`` instead and ``ctrf.json`` is left as it is
  (the document's ``publication.ctrf`` says which; :func:`ctrf_view_for`
  decides it).
- ``reward.json``: only when gradable. ``{"reward": 1.0}`` alone by default,
  as Harbor needs it: Harbor reads this first, rejects nesting, strings and
  nulls, and computes pass@k only when every trial has exactly one key.
  ``publication.reward_keys`` adds named figures (``fix_rate``,
  ``guards_hold`` as 1 or 0, ``case_fraction``; one that is undefined is
  left out, never written as null), which switches Harbor's pass@k off and
  turns its job mean into one mean per key.
- ``reward.txt``: only when gradable: the reward and a newline (``1.0\\n``),
  the same value as ``reward.json``'s ``reward``. Written last: its
  presence marks the set complete.

:func:`render` gives the bodies in write order; :data:`REWARD_FILES` is the
order stale reward files are removed in (``reward.txt`` first);
:data:`NAMES` every name a grade of ours may write.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable

from . import safefile, urls
from .ctrfreport import ctrf
from .document import GradeDocument, Publication
from .strictjson import canonical_bytes

__all__ = [
    "CTRF",
    "GRADE",
    "GRADE_CTRF",
    "NAMES",
    "PREVIOUS_GRADE",
    "REWARD_FILES",
    "REWARD_JSON",
    "REWARD_TXT",
    "WRITE_ORDER",
    "ctrf_view_for",
    "render",
    "reward_json",
    "reward_txt",
]

GRADE = "grade.json"
CTRF = "ctrf.json"
#: Where our CTRF view goes when ``ctrf.json`` is not ours to write.
GRADE_CTRF = "grade-ctrf.json"
REWARD_JSON = "reward.json"
REWARD_TXT = "reward.txt"
WRITE_ORDER = (GRADE, CTRF, REWARD_JSON, REWARD_TXT)
REWARD_FILES = (REWARD_TXT, REWARD_JSON)
#: Every name a grade of ours may write (either CTRF view).
NAMES = (GRADE, CTRF, GRADE_CTRF, REWARD_JSON, REWARD_TXT)
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


def render(document: GradeDocument) -> dict[str, bytes]:
    """The files of ``document`` in write order: ``grade.json``, the CTRF
    view under its name, and the two reward files only when it is gradable
    (``reward.txt`` last)."""
    bodies = {
        GRADE: document.to_bytes(),
        # The view's one float is the reward (ctrfreport's docstring).
        document.publication.ctrf: canonical_bytes(
            ctrf(document), finite=True, floats=(document.reward,)
        ),
    }
    if document.gradable:
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
