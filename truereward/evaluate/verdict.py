"""Verdict: an optional categorical judgment of one evaluation."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Verdict"]


class Verdict(StrEnum):
    """``pass``, ``fail``, or ``unspecified``.

    An unspecified verdict is a valid outcome: a measurement-only or
    qualitative evaluation has no pass threshold and must not invent one. It
    is never read as a failure (nor as a pass). In a report's JSON an
    unspecified verdict is left out.
    """

    PASS = "pass"
    FAIL = "fail"
    UNSPECIFIED = "unspecified"

    @property
    def decided(self) -> bool:
        """True for ``pass`` and ``fail``."""
        return self is not Verdict.UNSPECIFIED
