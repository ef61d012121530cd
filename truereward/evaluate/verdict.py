"""EvaluationVerdict: an optional categorical judgment of one evaluation.

The evaluation layer's words are ``pass``, ``fail`` and ``unspecified``; a
grade's row (:data:`truereward.record.cases.Verdict`) says ``pass``, ``fail`` or
``ungradable``. The one mapping between them is
:meth:`EvaluationVerdict.to_row`: ``pass`` and ``fail`` are the same words;
``unspecified`` has no row verdict (an evaluation without a threshold
decides nothing, and is not a refusal either: the caller decides from its
score or says why it cannot).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

__all__ = ["EvaluationVerdict"]


class EvaluationVerdict(StrEnum):
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
        return self is not EvaluationVerdict.UNSPECIFIED

    @classmethod
    def of(cls, passed: bool) -> EvaluationVerdict:
        """``pass`` when ``passed``, else ``fail``."""
        return cls.PASS if passed else cls.FAIL

    def to_row(self) -> Literal["pass", "fail"] | None:
        """The row verdict this verdict stands for: ``pass`` or ``fail``;
        ``None`` for ``unspecified`` (module docstring)."""
        if self is EvaluationVerdict.PASS:
            return "pass"
        if self is EvaluationVerdict.FAIL:
            return "fail"
        return None
