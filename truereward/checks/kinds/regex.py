"""``regex``: the pattern matches somewhere in the output.

``pattern`` (else ``value``) with ``flags`` (default ``"i"``; letters ``i``,
``m``, ``s``, others ignored with a warning); score 1 on a match, else 0.
Python's ``re`` syntax (the ``regex`` package in its compatible mode),
bounded before compiling (length, nesting, expanded size, set span) and
while searching (CPU time, the case's budget: a search that runs out gives
up, never a failed check). Compiled patterns are cached within bounds.
docs/checks.md, "Bounds and give-ups", gives the bounds and why.
"""

from __future__ import annotations

import importlib
import re
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from typing import Any

import regex

from ...util.exceptions import TruerewardError
from ..context import CaseContext, clock
from ..model import Measurement
from ..registry import BadCheck, CheckType, GaveUp, Warn

#: Longest pattern compiled, in characters.
MAX_PATTERN_LENGTH = 10_000
#: Deepest nesting of groups (``(`` inside ``(``) compiled.
MAX_NESTING = 50
#: Largest pattern compiled, in items once its repetitions are expanded: an
#: item is a character, a set, a group or an operator; a repetition counts
#: its body times its minimum count (at least once), so counts multiply.
MAX_EXPANDED = 100_000
#: Most characters spanned by the ranges of a pattern's character sets, in
#: the Basic Multilingual Plane (``[\u0100-\uffff]`` spans 65,280).
MAX_SET_SPAN = 1_000_000
#: Compiled patterns kept per process, at most, and their expanded items
#: together, at most (what an item costs in memory: docs/checks.md, "Bounds").
CACHE_ENTRIES = 512
CACHE_ITEMS = 500_000

_KNOWN_FLAGS = {
    "i": int(regex.IGNORECASE),
    "m": int(regex.MULTILINE),
    "s": int(regex.DOTALL),
}
# re's flags have the same values: a pattern is checked by both with one int.
assert {"i": int(re.IGNORECASE), "m": int(re.MULTILINE), "s": int(re.DOTALL)} == _KNOWN_FLAGS

#: ``re``'s own parser: the tree it builds is what the bounds are measured
#: on (it builds it without compiling anything).
_parser: Any = importlib.import_module("re._parser")
_REPEATS = frozenset({"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"})
_RANGES = frozenset({"RANGE", "RANGE_UNI_IGNORE"})
_BMP_LAST = 0xFFFF


class PatternRefused(TruerewardError, ValueError):
    """A pattern over the compile bounds. The message says which."""


def shown(pattern: str, limit: int = 60) -> str:
    """``pattern`` for a message: its ``repr``, cut when it is long."""
    if len(pattern) <= limit:
        return repr(pattern)
    return f"{pattern[:limit]!r}... ({len(pattern):,} characters)"


def nesting(pattern: str) -> int:
    """How deep ``pattern`` nests groups, read from its text (escapes and
    character sets skipped, ``(?#...)`` comments too) without parsing it."""
    depth = deepest = 0
    index = 0
    size = len(pattern)
    in_set = False
    while index < size:
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if in_set:
            in_set = char != "]"
            index += 1
            continue
        if char == "[":
            in_set = True
            index += 1
            # A leading ^ negates; a ] right after [ or [^ is a literal.
            if pattern.startswith("^", index):
                index += 1
            if pattern.startswith("]", index):
                index += 1
            continue
        if char == "(":
            if pattern.startswith("?#", index + 1):
                end = pattern.find(")", index)
                index = size if end < 0 else end + 1
                continue
            depth += 1
            deepest = max(deepest, depth)
        elif char == ")" and depth:
            depth -= 1
        index += 1
    return deepest


def _children(value: Any) -> Iterator[Any]:
    """The subpatterns inside one node's argument, wherever they sit."""
    if isinstance(value, _parser.SubPattern):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _children(item)


def _measure_tree(tree: Any) -> tuple[int, int]:
    """``(expanded items, set span)`` of a parsed pattern (the items capped
    just above :data:`MAX_EXPANDED`, so that counts stay small numbers)."""
    cap = MAX_EXPANDED + 1
    span = 0

    def items(sub: Any) -> int:
        nonlocal span
        total = 0
        for op, argument in sub:
            name = str(op)
            if name in _REPEATS:
                low, _high, body = argument
                total += 1 + max(int(low), 1) * items(body)
            elif name == "IN":
                total += 1
                for kind, bounds in argument:
                    if str(kind) in _RANGES:
                        first, last = bounds
                        span += max(min(last, _BMP_LAST) - first + 1, 0)
            else:
                total += 1 + sum(items(child) for child in _children(argument))
            if total >= cap:
                return cap
        return total

    return items(tree), span


class PatternInvalid(TruerewardError, ValueError):
    """A pattern that ``re`` does not accept. The message is ``re``'s."""


def _weigh(pattern: str, flags: int) -> int:
    """The expanded items of ``pattern`` (:class:`PatternRefused` when it is
    over a bound; ``re.error`` when ``re`` cannot parse it)."""
    depth = nesting(pattern)
    if depth > MAX_NESTING:
        raise PatternRefused(f"groups nested {depth:,} deep; at most {MAX_NESTING} are compiled")
    expanded, span = _measure_tree(_parser.parse(pattern, flags))
    if expanded > MAX_EXPANDED:
        raise PatternRefused(
            f"more than {MAX_EXPANDED:,} items once its repetitions are expanded (a "
            "repetition counts its body times its minimum count, so nested counts "
            f"multiply); at most {MAX_EXPANDED:,} are compiled"
        )
    if span > MAX_SET_SPAN:
        raise PatternRefused(
            f"its character ranges span {span:,} characters; at most {MAX_SET_SPAN:,} are compiled"
        )
    return expanded


@lru_cache(maxsize=256)
def _checked(pattern: str, flags: int) -> tuple[int, type[ValueError] | None, str]:
    """``(expanded items, None, "")`` when ``pattern`` is within the bounds
    and valid ``re`` syntax, else ``(0, PatternRefused or PatternInvalid,
    why)``. Refusals are cached too (as text: a cached exception would keep
    the frames of its last raise alive), because a suite may repeat one
    pattern in every case. The length is checked before this, so a key here
    is at most :data:`MAX_PATTERN_LENGTH` characters."""
    try:
        # re warns about constructs whose meaning may change (nested sets).
        with warnings.catch_warnings(action="ignore"):
            weight = _weigh(pattern, flags)
            re.compile(pattern, flags)
    except PatternRefused as refused:
        return 0, PatternRefused, str(refused)
    except (re.error, RecursionError, OverflowError, ValueError) as error:
        return 0, PatternInvalid, str(error)
    return weight, None, ""


class _Cache:
    """Compiled patterns, least recently used first out, within a count and
    a total of expanded items."""

    def __init__(self, entries: int, items: int) -> None:
        self.entries = entries
        self.items = items
        self._held = 0
        self._kept: OrderedDict[tuple[str, int], tuple[regex.Pattern[str], int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, int]) -> regex.Pattern[str] | None:
        with self._lock:
            found = self._kept.get(key)
            if found is None:
                return None
            self._kept.move_to_end(key)
            return found[0]

    def put(self, key: tuple[str, int], pattern: regex.Pattern[str], weight: int) -> None:
        if weight > self.items:
            return
        with self._lock:
            if key in self._kept:
                return
            self._kept[key] = (pattern, weight)
            self._held += weight
            while len(self._kept) > self.entries or self._held > self.items:
                _, (_, dropped) = self._kept.popitem(last=False)
                self._held -= dropped

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._held = 0


_CACHE = _Cache(CACHE_ENTRIES, CACHE_ITEMS)


def compiled(pattern: str, flags: int) -> regex.Pattern[str]:
    """The compiled pattern, cached. The syntax is Python's ``re``: a pattern
    ``re`` refuses is refused (``regex.error`` or ``re.error``), even where
    the ``regex`` package would accept it (``\\p{L}``, ``(?<n>...)``), so
    that a pattern means the same here and in ai-eval-forge. A pattern over
    the bounds (module docstring) is refused before anything is compiled
    (:class:`PatternRefused`)."""
    key = (pattern, flags)
    found = _CACHE.get(key)
    if found is not None:
        return found
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise PatternRefused(
            f"{len(pattern):,} characters long; at most {MAX_PATTERN_LENGTH:,} are compiled "
            "(a long list of words is a contains check)"
        )
    weight, problem, why = _checked(pattern, flags)
    if problem is not None:
        raise problem(why)
    # Not in the regex package's own cache too: it keeps 500 patterns whatever
    # their size, so its memory has no bound; ours is bounded by size.
    made = regex.compile(
        brackets_as_re_reads_them(pattern), flags | int(regex.VERSION0), cache_pattern=False
    )
    _CACHE.put(key, made, weight)
    return made


def compiled_or_refused(
    pattern: str, flags: int, error: Callable[[str], Exception]
) -> regex.Pattern[str]:
    """:func:`compiled`, a pattern it refuses or cannot compile raised as
    ``error(message)``, the message naming the pattern and why (the one the
    ``regex`` check and the regular-expression criteria give)."""
    try:
        return compiled(pattern, flags)
    except PatternRefused as refused:
        raise error(f"pattern {shown(pattern)} is refused: {refused}") from None
    except (regex.error, re.error, RecursionError, OverflowError, ValueError) as invalid:
        raise error(
            f"pattern {shown(pattern)} is not a valid regular expression: {invalid}"
        ) from None


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
    # Each flag is a bit of its own: their sum is their union.
    flags = sum(flag for letter, flag in _KNOWN_FLAGS.items() if letter in raw)
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
    flags = _flags(check.get("flags", "i"), warn)
    compiled_or_refused(pattern, flags, BadCheck)
    letters = "".join(letter for letter, flag in _KNOWN_FLAGS.items() if flags & flag)
    return {"pattern": pattern, "flags": letters}


_CATASTROPHIC = "the pattern backtracks too much on this output (catastrophic backtracking)"


def measure(params: Mapping[str, Any], context: CaseContext) -> Measurement:
    options = context.options
    flags = sum(_KNOWN_FLAGS[letter] for letter in params["flags"])  # each letter once
    started = clock()
    pattern = compiled(params["pattern"], flags)  # cached, unless it was dropped
    left = context.remaining()
    if left <= 0:
        raise GaveUp("the case's budget ran out before this search")
    timeout = min(options.regex_timeout, left)
    try:
        match = pattern.search(context.actual, timeout=timeout)
    except TimeoutError:
        spent = clock() - started
        if timeout < options.regex_timeout:
            raise GaveUp(
                f"the case's budget ran out during this search, after {spent:.1f} s: "
                f"{_CATASTROPHIC}"
            ) from None
        raise GaveUp(
            f"the search ran out of its {options.regex_timeout:g} s (after {spent:.1f} s): "
            f"{_CATASTROPHIC}"
        ) from None
    if match is None:
        return Measurement(0.0, (0, 1), "no match")
    return Measurement(1.0, (1, 1), f"matched at offset {match.start()}")


CHECK = CheckType(
    name="regex",
    description="a regular expression matches the output (time-bounded)",
    parse=parse,
    measure=measure,
)
