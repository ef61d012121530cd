"""What goes wrong in calibration, by whose doing.

:class:`CalibrationError` is bad input from the caller (a question, a label,
an answer, mismatched lengths); it is raised before any provider call when
:func:`~truereward.calibrate.run` validates. :class:`ProviderFailure` is the
judge failing while being asked; it aborts a run and is never counted as an
abstention. :class:`FlowFailure` is a caller-supplied flow raising.
"""

from __future__ import annotations

__all__ = ["CalibrationError", "FlowFailure", "ProviderFailure", "UnsupportedQuestion"]


class CalibrationError(ValueError):
    """Invalid calibration input. The message starts with the field path
    (``cases[2].labels.quality: ...``) so a person can find it."""


class UnsupportedQuestion(CalibrationError):
    """A question kind that can be described but not decided or scored (a
    region). Raised even when the answer is undecided, so an unsupported
    question never passes silently as a run of abstentions."""


class ProviderFailure(Exception):
    """The provider raised, timed out, or returned something that is not a
    valid answer. ``case_index`` is the case being asked (``None`` for a
    call outside a run); ``warmup`` says whether it was a warm-up call. The
    original exception is ``__cause__``.

    A failure is never an abstention: a run that meets one raises this and
    returns no report at all."""

    def __init__(self, message: str, *, case_index: int | None = None, warmup: bool = False):
        super().__init__(message)
        self.case_index = case_index
        self.warmup = warmup


class FlowFailure(Exception):
    """A flow raised instead of completing or stopping. ``flow_index`` is the
    flow; the original exception is ``__cause__``. Nothing is scored."""

    def __init__(self, message: str, *, flow_index: int):
        super().__init__(message)
        self.flow_index = flow_index
