"""Finding the report entries that are a declared case.

Both test-report readers index their entries under a few keys and look a
declared id up with :class:`EntryIndex`: exact keys first, then (for path-
or dotted ids written relative to another root directory) a unique suffix
match on a separator boundary. The reader decides the keys and the order;
the rules each reader applies are documented in its module.
"""

from __future__ import annotations

from collections.abc import Iterable

from .outcomes import TestOutcome

__all__ = ["EntryIndex", "suffix_related"]


def suffix_related(left: str, right: str, separators: str) -> bool:
    """Whether one of ``left``/``right`` ends with the other at a separator
    boundary (``tests.test_app`` and ``app.tests.test_app`` with ``.``)."""
    if not left or not right or left == right:
        return left == right and bool(left)
    shorter, longer = sorted((left, right), key=len)
    return longer.endswith(shorter) and longer[-len(shorter) - 1] in separators


class EntryIndex:
    """Report entries by key."""

    def __init__(self, entries: Iterable[TestOutcome]) -> None:
        self.entries = list(entries)
        self._by_key: dict[str, list[TestOutcome]] = {}
        for entry in self.entries:
            for key in dict.fromkeys(entry.keys):
                self._by_key.setdefault(key, []).append(entry)

    def exact(self, *keys: str) -> list[TestOutcome]:
        """The entries under the first of ``keys`` that has any."""
        for key in keys:
            found = self._by_key.get(key)
            if found:
                return list(found)
        return []

    def keys(self) -> Iterable[str]:
        """Every key."""
        return self._by_key.keys()
