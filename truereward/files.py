"""The published files of one grade, and their bytes.

In a verifier's logs directory (or under an object-store prefix):

- ``grade.json``: always; the whole :class:`~truereward.document.GradeDocument`.
- ``ctrf.json``: always; the CTRF report (:mod:`truereward.ctrfreport`).
- ``reward.json``: only when gradable. Flat, every value a finite number:
  ``{"reward": 1.0, "fix_rate": 1.0, "guards_hold": 1}`` (Harbor reads this
  first and rejects nesting, strings and nulls; a rate that is undefined is
  left out rather than written as null).
- ``reward.txt``: only when gradable: the reward and a newline (``1.0\\n``).
  Written last: its presence marks the set complete.

:data:`WRITE_ORDER` is the order files are written in; :data:`REWARD_FILES`
the order stale reward files are removed in (``reward.txt`` first).
"""

from __future__ import annotations

import math

from .ctrfreport import ctrf
from .document import GradeDocument
from .strictjson import canonical_bytes

__all__ = [
    "CTRF",
    "GRADE",
    "REWARD_FILES",
    "REWARD_JSON",
    "REWARD_TXT",
    "WRITE_ORDER",
    "render",
    "reward_json",
    "reward_txt",
]

GRADE = "grade.json"
CTRF = "ctrf.json"
REWARD_JSON = "reward.json"
REWARD_TXT = "reward.txt"
WRITE_ORDER = (GRADE, CTRF, REWARD_JSON, REWARD_TXT)
REWARD_FILES = (REWARD_TXT, REWARD_JSON)


def reward_json(document: GradeDocument) -> dict[str, float | int]:
    """The flat ``reward.json`` object of a gradable document: ``reward``,
    ``fix_rate`` (left out when undefined) and ``guards_hold`` as 1 or 0.
    ``ValueError`` for an ungradable document, which has no reward file."""
    if not document.gradable or document.reward is None:
        raise ValueError("an ungradable grade has no reward.json")
    out: dict[str, float | int] = {"reward": document.reward}
    if document.fix_rate is not None:
        out["fix_rate"] = document.fix_rate
    out["guards_hold"] = int(document.guards_hold)
    if not all(math.isfinite(value) for value in out.values()):
        raise ValueError(f"reward.json values must be finite numbers, got {out}")
    return out


def reward_txt(document: GradeDocument) -> bytes:
    """The ``reward.txt`` bytes of a gradable document (``b"1.0\\n"``)."""
    if not document.gradable or document.reward is None:
        raise ValueError("an ungradable grade has no reward.txt")
    return f"{float(document.reward)!r}\n".encode("ascii")


def render(document: GradeDocument) -> dict[str, bytes]:
    """The files of ``document`` in write order: the two reward files only
    when it is gradable."""
    bodies = {
        GRADE: document.to_bytes(),
        CTRF: canonical_bytes(ctrf(document)),
    }
    if document.gradable:
        bodies[REWARD_JSON] = canonical_bytes(reward_json(document))
        bodies[REWARD_TXT] = reward_txt(document)
    return bodies
