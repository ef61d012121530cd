"""The one decision every backend makes before it writes: what to do about
the grade already published at the target.

Pure: it reads the existing ``grade.json`` bytes (or their absence) and the
caller's ``replaces``, never the store. Backends call it and then do what it
says, each with its own atomic primitives.
"""

from __future__ import annotations

import hashlib
from enum import Enum

__all__ = ["PublishDecision", "decide", "sha256_hex"]


class PublishDecision(Enum):
    """What publishing does."""

    #: Nothing is published: create the grade (create-if-absent).
    CREATE = "create"
    #: The same grade is published: write nothing, only repair what a
    #: crashed earlier publish left unfinished.
    SAME = "same"
    #: The grade named by ``replaces`` is published: replace it.
    REPLACE = "replace"
    #: Anything else: refuse, touching nothing.
    CONFLICT = "conflict"


def sha256_hex(data: bytes) -> str:
    """sha256 of ``data`` as lowercase hex."""
    return hashlib.sha256(data).hexdigest()


def decide(existing: bytes | None, ours: bytes, replaces: str | None) -> PublishDecision:
    """Compare the published ``grade.json`` (``None`` when absent) with ours.

    - identical bytes: :attr:`PublishDecision.SAME` (idempotent republish, whatever
      ``replaces`` says: the replacement already happened);
    - nothing published and no ``replaces``: :attr:`PublishDecision.CREATE`;
    - something published whose sha256 is ``replaces``: :attr:`PublishDecision.REPLACE`;
    - otherwise :attr:`PublishDecision.CONFLICT`, including a ``replaces`` that names
      a grade when none is published (compare-and-swap is exact).
    """
    if existing is not None and existing == ours:
        return PublishDecision.SAME
    if existing is None:
        return PublishDecision.CREATE if replaces is None else PublishDecision.CONFLICT
    if replaces is not None and sha256_hex(existing) == replaces.lower():
        return PublishDecision.REPLACE
    return PublishDecision.CONFLICT
