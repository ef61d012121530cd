"""Finding the report entries that are a declared case.

Both test-report readers index their entries under a few keys and look a
declared id up with :class:`EntryIndex`: exact keys first, then (for path-
or dotted ids written relative to another root directory) a suffix match on
a separator boundary. The reader decides the keys and the order; the rules
each reader applies are documented in its module.

The rule both share: a pytest node id (:func:`pytest_node_id_parts`;
``test_app.py::test_x`` names a file at the root) also matches the tests
whose id is that one written from another root directory
(``tests/test_app.py::test_x``, ``app/tests/test_app.py::test_x``, and the
other way round); ``junit`` compares classnames after a ``.``, ``ctrf``
names after a ``/``, and ``ctrf`` applies it to every id that names a file
(:func:`names_a_file`). When that finds several different tests the match
is ambiguous, and the case is refused (``CASE_INVALID``), never guessed.
"""

from __future__ import annotations

from collections.abc import Iterable

from .outcomes import TestOutcome

__all__ = ["EntryIndex", "names_a_file", "pytest_node_id_parts", "suffix_related"]


def suffix_related(left: str, right: str, separators: str) -> bool:
    """Whether one of ``left``/``right`` ends with the other at a separator
    boundary (``tests.test_app`` and ``app.tests.test_app`` with ``.``)."""
    if not left or not right or left == right:
        return left == right and bool(left)
    shorter, longer = sorted((left, right), key=len)
    return longer.endswith(shorter) and longer[-len(shorter) - 1] in separators


def pytest_node_id_parts(node_id: str) -> tuple[str, str] | None:
    """``(classname, name)`` pytest's JUnit XML writes for a node id
    ``path.py::[Class::...]name``, or None when it is not such an id."""
    head, bracket, parameters = node_id.partition("[")
    parts = head.split("::")  # parameters may hold "::" themselves
    parts[-1] += bracket + parameters
    if len(parts) < 2 or not parts[0].endswith(".py"):
        return None
    module = parts[0][: -len(".py")].replace("\\", "/").strip("/").replace("/", ".")
    return ".".join([module, *parts[1:-1]]), parts[-1]


def names_a_file(case_id: str) -> bool:
    """Whether ``case_id`` names its test by a file path, so that a report
    written from another root directory may name it with more (or fewer)
    leading directories: a ``/`` in it, or a pytest node id
    (``test_app.py::test_x``: a file at the root has no ``/``)."""
    return "/" in case_id or pytest_node_id_parts(case_id) is not None


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

    def suffix(self, case_id: str, separators: str) -> list[TestOutcome]:
        """The entries under every key that is ``case_id`` written from
        another root (:func:`suffix_related` with ``separators``), each once.
        Several different tests among them is an ambiguous match, for the
        caller to refuse."""
        found = {
            id(entry): entry
            for key, entries in self._by_key.items()
            if suffix_related(key, case_id, separators)
            for entry in entries
        }
        return list(found.values())
