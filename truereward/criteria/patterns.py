"""Regular expressions for criteria, through the checks' bounded engine.

:func:`search` compiles ``pattern`` with Python's ``re`` syntax and no flags
(as ``re.search(pattern, text)``, what rewardkit calls) through
:func:`truereward.checks.kinds.regex.compiled`, which refuses a pattern over
its compile bounds before compiling it, and searches within ``timeout``
seconds of CPU time. A pattern that does not compile, or is over the bounds,
is the task's (``CASE_INVALID``); a search that runs out of time gives up
(``CHECK_GAVE_UP``: the grader's, not retried), never a fail. Needs the
``regex`` package (``pip install 'truereward[checks]'``): without it the
criterion is ``CASE_INVALID`` saying so.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ..codes import Ungradable
from ..codes.checks import CHECK_GAVE_UP

__all__ = ["check", "search"]


def check(pattern: str) -> Any:
    """``pattern`` compiled (cached), or the refusal (module docstring)."""
    try:
        from ..checks.kinds.regex import compiled_or_refused
    except ImportError:
        raise Ungradable(
            "CASE_INVALID",
            "a regular expression criterion needs the regex package: "
            "pip install 'truereward[checks]'",
        ) from None
    return compiled_or_refused(pattern, 0, partial(Ungradable, "CASE_INVALID"))


def search(pattern: str, text: str, *, timeout: float, what: str) -> int | None:
    """Where ``pattern`` first matches ``text`` (its offset), or ``None``;
    ``what`` names the text in messages."""
    from ..checks.kinds.regex import shown

    made = check(pattern)
    try:
        found = made.search(text, timeout=timeout)
    except TimeoutError:
        raise Ungradable(
            CHECK_GAVE_UP,
            f"pattern {shown(pattern)} on {what}: the search ran out of its {timeout:g} s "
            "(catastrophic backtracking)",
        ) from None
    return None if found is None else found.start()
