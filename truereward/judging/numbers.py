"""Numbers from outside: real, finite, and never a boolean."""

from __future__ import annotations

import math
from typing import TypeGuard

from .errors import JudgeError

__all__ = ["finite_float", "is_number", "positive_seconds"]


def is_number(value: object) -> TypeGuard[int | float]:
    """Whether ``value`` is an ``int`` or a ``float``, never a ``bool``."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def finite_float(value: object) -> float | None:
    """``value`` as a float when it is an ``int`` or ``float`` (never a
    ``bool``) that is finite as a float, else ``None``. An integer too large
    for a float is not finite (``float()`` would overflow)."""
    if not is_number(value):
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
