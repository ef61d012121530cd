"""Numbers from outside: real, finite, and never a boolean."""

from __future__ import annotations

import math

from .errors import JudgeError

__all__ = ["finite_float", "positive_seconds"]


def finite_float(value: object) -> float | None:
    """``value`` as a float when it is an ``int`` or ``float`` (never a
    ``bool``) that is finite as a float, else ``None``. An integer too large
    for a float is not finite (``float()`` would overflow)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def positive_seconds(value: object, where: str) -> float | None:
    """A timeout: ``None`` (no limit) or a finite number of seconds > 0;
    JudgeError naming ``where`` otherwise."""
    if value is None:
        return None
    number = finite_float(value)
    if number is None or number <= 0:
        raise JudgeError(f"{where}: a positive number of seconds or None, got {value!r}")
    return number
