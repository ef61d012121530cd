"""Scores, thresholds and sums without float artefacts.

A score is reported as ai-eval-forge reports it, a float rounded to four
decimals (:func:`round4`), and is also known exactly as a ratio of integers;
a threshold ``min`` is read as the decimal it was written as. A check passes
when its exact score, or its score as reported, reaches ``min``
(:func:`reaches_min`): what you see is what is compared (ai-eval-forge compares
the unrounded float, so an F1 of 3/4 computed as ``0.7499999999999999`` is
shown as 0.75 and fails ``min: 0.75``; here it passes). docs/checks.md.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable
from fractions import Fraction
from functools import lru_cache
from typing import Any

__all__ = [
    "Ratio",
    "RunningSum",
    "decimal_ratio",
    "lenient_float",
    "reaches_min",
    "report_units",
    "round4",
    "round_places",
]


def lenient_float(
    raw: Any, name: str, warn: Callable[[str], None], error: Callable[[str], Exception]
) -> float:
    """``raw`` as a finite float, read leniently: a number as it is, a
    boolean or a string ``float()`` reads with a warning naming ``name``;
    anything else, an overflow or a non-finite value raises
    ``error(message)``, the message starting with ``name``."""
    if type(raw) is float and math.isfinite(raw):
        return raw
    if isinstance(raw, bool):
        warn(f"{name} {raw!r} is a boolean; read as {float(raw)}")
        value = float(raw)
    elif isinstance(raw, int | float):  # int, or a float subclass
        try:
            value = float(raw)
        except OverflowError:
            raise error(f"{name}: {raw} is too large") from None
    elif isinstance(raw, str):
        try:
            value = float(raw)
        except ValueError:
            raise error(f"{name}: a number, got {raw!r}") from None
        warn(f"{name} {raw!r} is a string; read as {value!r}")
    else:
        raise error(f"{name}: a number, got {raw!r}")
    if not math.isfinite(value):
        raise error(f"{name}: a finite number, got {raw!r}")
    return value


#: An exact non-negative score ``numerator / denominator`` (denominator > 0).
Ratio = tuple[int, int]

#: Reported scores have four decimals: ``units / REPORT_SCALE``.
REPORT_SCALE = 10_000


def report_units(value: float) -> int:
    """``value`` in ten-thousandths, rounded half to even on the float
    product (ai-eval-forge's rounding, kept so reported scores agree)."""
    return round(value * REPORT_SCALE)


def round4(value: float) -> float:
    """``value`` rounded to four decimals as ai-eval-forge rounds it."""
    return report_units(value) / REPORT_SCALE


def round_places(value: float, places: int) -> float:
    """``round(value * 10**places) / 10**places``: ai-eval-forge's rounding
    (half to even on the float product), for sums such as the total cost."""
    factor = 10.0**places  # exact for the places used (up to 22)
    return round(value * factor) / factor


@lru_cache(maxsize=4096)
def decimal_ratio(value: float) -> Ratio:
    """The decimal that ``value`` was written as, exactly: the shortest
    decimal that reads back as this float (``0.7`` → 7/10, ``1e-05`` →
    1/100000). ``value`` must be finite."""
    exact = Fraction(repr(value))
    return exact.numerator, exact.denominator


def reaches_min(value: float, exact: Ratio, minimum: Ratio) -> tuple[bool, float]:
    """A check's verdict and reported score, from its score as a float
    (``value``) and as an exact ratio, and its threshold as an exact ratio.

    The reported score is ``round4(value)``. The check passes when the exact
    score is at least ``minimum``, or when the reported score is (ten
    thousandths against ``minimum``, in integers)."""
    units = report_units(value)
    num, den = exact
    min_num, min_den = minimum
    passed = num * min_den >= min_num * den or units * min_den >= min_num * REPORT_SCALE
    return passed, units / REPORT_SCALE


class RunningSum:
    """A running total of floats that equals the builtin ``sum()`` of the same
    values in the same order, on this interpreter, without keeping them.

    Summaries are folded as cases stream by; ai-eval-forge calls ``sum()``
    over all of them at the end. Python 3.12 made ``sum()`` of floats
    compensated (Neumaier); 3.11 adds plainly. Both are mirrored, so the
    summary is the same float, not merely a close one. (``sum()`` starts
    from the int 0; starting from 0.0 gives the same floats.)
    """

    __slots__ = ("_compensation", "_total")

    _COMPENSATED = sys.version_info >= (3, 12)

    def __init__(self) -> None:
        self._total = 0.0
        self._compensation = 0.0

    def add(self, value: float) -> None:
        """Add one float."""
        self.extend((value,))

    def extend(self, values: Iterable[float]) -> None:
        """Add floats, in order."""
        if not self._COMPENSATED:
            # Plain left-to-right addition: what sum() does from a float start.
            self._total = sum(values, self._total)
            return
        total = self._total
        compensation = self._compensation
        for value in values:
            moved = total + value
            if abs(total) >= abs(value):
                compensation += (total - moved) + value
            else:
                compensation += (value - moved) + total
            total = moved
        self._total = total
        self._compensation = compensation

    @property
    def value(self) -> float:
        """The total so far (``0.0`` when nothing was added)."""
        if self._COMPENSATED and self._compensation and math.isfinite(self._compensation):
            return self._total + self._compensation
        return self._total
