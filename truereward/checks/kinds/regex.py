"""``regex``: the pattern matches somewhere in the output.

Pattern: ``pattern``, else ``value`` (as in ai-eval-forge, an empty
``pattern`` falls through to ``value``). ``flags`` (default ``"i"``): the
letters ``i`` (ignore case), ``m`` (multi-line), ``s`` (dot matches newline);
other letters are ignored with a warning (JavaScript's ``g`` is common). A
list of letters is read the same way. Score 1 on a match, else 0.

Syntax and semantics are Python's ``re`` (the ``regex`` package in its
``re``-compatible mode), but every search is bounded in time
(:attr:`~truereward.checks.context.ScoringOptions.regex_timeout`, 1 s by
default): a catastrophic pattern such as ``(a|aa)+$`` on a long line of
``a`` fails its check with a detail saying so, instead of hanging the suite.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import regex

from ..context import CaseContext
from ..model import Measurement
from ..registry import BadCheck, CheckType, Warn, register

_KNOWN_FLAGS = {
    "i": int(regex.IGNORECASE),
    "m": int(regex.MULTILINE),
    "s": int(regex.DOTALL),
}
# re's flags have the same values: a pattern is checked by both with one int.
assert {"i": int(re.IGNORECASE), "m": int(re.MULTILINE), "s": int(re.DOTALL)} == _KNOWN_FLAGS


@lru_cache(maxsize=512)
def compiled(pattern: str, flags: int) -> regex.Pattern[str]:
    """The compiled pattern, cached. The syntax is Python's ``re``: a pattern
    ``re`` refuses is refused (``regex.error`` or ``re.error``), even where
    the ``regex`` package would accept it (``\\p{L}``, ``(?<n>...)``), so
    that a pattern means the same here and in ai-eval-forge."""
    with warnings.catch_warnings():
        # re warns about constructs whose meaning may change (nested sets).
        warnings.simplefilter("ignore")
        re.compile(pattern, flags)
    return regex.compile(brackets_as_re_reads_them(pattern), flags | int(regex.VERSION0))


def brackets_as_re_reads_them(pattern: str) -> str:
    """``pattern`` with every unescaped ``[`` inside a character set escaped.

    ``re`` reads a ``[`` inside a set as a literal bracket, so ``[[:alpha:]]``
    is the set ``[:alph`` followed by ``]``; the ``regex`` package reads it as
    a POSIX class. Escaping those brackets gives ``regex`` the meaning ``re``
    (and ai-eval-forge) gives the pattern. Patterns without ``[:`` are
    returned unchanged (nothing else differs), which also keeps a ``[`` in a
    verbose-mode comment from being mistaken for a set.
    """
    if "[:" not in pattern:
        return pattern
    out: list[str] = []
    in_set = False
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            out.append(pattern[index : index + 2])
            index += 2
            continue
        if not in_set:
            out.append(char)
            index += 1
            if char == "[":
                in_set = True
                # A leading ^ negates; a ] right after [ or [^ is a literal.
                if pattern.startswith("^", index):
                    out.append("^")
                    index += 1
                if pattern.startswith("]", index):
                    out.append("]")
                    index += 1
            continue
        if char == "[":
            out.append("\\[")
        else:
            out.append(char)
            in_set = char != "]"
        index += 1
    return "".join(out)


def _flags(raw: Any, warn: Warn) -> int:
    if not isinstance(raw, str | list | dict):
        raise BadCheck(f'flags: letters such as "im", got {raw!r}')
    flags = 0
    for letter, flag in _KNOWN_FLAGS.items():
        if letter in raw:
            flags |= flag
    unknown = [item for item in raw if not (isinstance(item, str) and item in _KNOWN_FLAGS)]
    if unknown:
        listed = ", ".join(repr(item) for item in unknown)
        warn(f"flags: {listed} ignored (known: i, m, s)")
    return flags


def parse(check: Mapping[str, Any], case: Mapping[str, Any], warn: Warn) -> dict[str, Any]:
    pattern = check.get("pattern") or check.get("value")
    if pattern is None:
        raise BadCheck("pattern: missing (give 'pattern' or 'value')")
    if not isinstance(pattern, str):
        raise BadCheck(f"pattern: a string, got {pattern!r}")
    raw_flags = check.get("flags", "i")
    flags = _flags(raw_flags, warn)
    try:
        compiled(pattern, flags)
    except (regex.error, re.error, RecursionError, OverflowError, ValueError) as error:
        raise BadCheck(f"pattern {pattern!r} is not a valid regular expression: {error}") from None
    letters = "".join(letter for letter, flag in _KNOWN_FLAGS.items() if flags & flag)
    return {"pattern": pattern, "flags": letters}


@lru_cache(maxsize=512)
def _compiled_with(pattern: str, letters: str) -> regex.Pattern[str]:
    flags = 0
    for letter in letters:
        flags |= _KNOWN_FLAGS[letter]
    return compiled(pattern, flags)


def measure(params: Mapping[str, Any], context: CaseContext) -> Measurement:
    pattern = _compiled_with(params["pattern"], params["flags"])
    timeout = context.options.regex_timeout
    try:
        match = pattern.search(context.actual, timeout=timeout)
    except TimeoutError:
        return Measurement(
            0.0,
            (0, 1),
            f"gave up after {timeout:g} s: the pattern backtracks too much on this output "
            "(catastrophic backtracking); the check fails",
        )
    if match is None:
        return Measurement(0.0, (0, 1), "no match")
    return Measurement(1.0, (1, 1), f"matched at offset {match.start()}")


CHECK = register(
    CheckType(
        name="regex",
        description="a regular expression matches the output (time-bounded)",
        parse=parse,
        measure=measure,
    )
)
