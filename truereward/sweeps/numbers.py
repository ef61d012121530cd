"""How the sweep reports write a figure, so that the markdown and the HTML
views of one sweep show the same text for it. docs/sweeps.md."""

from __future__ import annotations

__all__ = ["ABSENT", "real", "signed"]

#: An absent value (the mean of no reward, a refused run's reward): never 0.
ABSENT = "—"


def real(value: float) -> str:
    """``value`` rounded to 4 decimals as Python writes a float (``0.6667``,
    ``1.0``); one that rounds to zero is ``0.0``, never ``-0.0``."""
    rounded = round(value, 4)
    return repr(0.0 if rounded == 0 else rounded)


def signed(value: float) -> str:
    """:func:`real`, with ``+`` before a value that rounds above zero (a
    delta): ``+0.25``, ``-0.1``, ``0.0``."""
    text = real(value)
    return f"+{text}" if round(value, 4) > 0 else text
