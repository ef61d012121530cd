"""What goes wrong when a judge is asked, by whose doing.

:class:`JudgeError` is bad input from the caller (a question, a label, an
answer, a provider setting); it is raised before any provider call.
:class:`ProviderFailure` is the judge failing while being asked; it is never
counted as an abstention.
"""

from __future__ import annotations

from ..util.exceptions import TruerewardError

__all__ = ["JudgeError", "ProviderFailure", "UnsupportedQuestion"]


class JudgeError(TruerewardError, ValueError):
    """Invalid input to a judge. The message starts with the field path
    (``cases[2].labels.quality: ...``) so a person can find it."""


class UnsupportedQuestion(JudgeError):
    """A question kind that can be described but not decided or scored (a
    region). Raised even when the answer is undecided, so an unsupported
    question never passes silently as a run of abstentions."""


class ProviderFailure(TruerewardError):
    """The provider raised, timed out, or returned something that is not a
    valid answer. ``case_index`` is the case being asked (``None`` for a
    call outside a run); ``warmup`` says whether it was a warm-up call. The
    original exception is ``__cause__``.

    A failure is never an abstention: a calibration run that meets one
    raises this and returns no report at all, and the judge reader refuses
    the case (``PROVIDER_FAILED``)."""

    def __init__(self, message: str, *, case_index: int | None = None, warmup: bool = False):
        super().__init__(message)
        self.case_index = case_index
        self.warmup = warmup
