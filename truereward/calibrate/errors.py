"""What goes wrong in calibration, by whose doing.

:class:`CalibrationError` is bad calibration input (a case, a log file,
mismatched lengths); it is a :class:`~truereward.judging.JudgeError`, the
error of a bad question, label or answer, so catching ``JudgeError`` catches
both. :class:`~truereward.judging.ProviderFailure` is the judge failing
while being asked; it aborts a run. :class:`FlowFailure` is a caller-supplied
flow raising.
"""

from __future__ import annotations

from ..judging.errors import JudgeError
from ..util.exceptions import TruerewardError

__all__ = ["CalibrationError", "FlowFailure"]


class CalibrationError(JudgeError):
    """Invalid calibration input. The message starts with the field path
    (``cases[2].labels.quality: ...``) so a person can find it."""


class FlowFailure(TruerewardError):
    """A flow raised instead of completing or stopping. ``flow_index`` is the
    flow; the original exception is ``__cause__``. Nothing is scored."""

    def __init__(self, message: str, *, flow_index: int):
        super().__init__(message)
        self.flow_index = flow_index
