"""Finding the report entries that are a declared case.

Both test-report readers index their entries under a few keys and look a
declared id up with :class:`EntryIndex` (exact keys, then a suffix on a
separator boundary, then :func:`trimmed_fallback`); :func:`key_filter` says
which entries a reader must keep, and :class:`EntryBudget` bounds what it
keeps. docs/readers.md, "Finding a case's entries" and "Memory", gives the
rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..record.cases import MAX_CASES
from .outcomes import TestOutcome, strip_parameters

__all__ = [
    "KEEP_ALL",
    "MAX_KEPT",
    "MAX_KEPT_TEXT",
    "EntryBudget",
    "EntryIndex",
    "Matcher",
    "key_filter",
    "names_a_file",
    "pytest_node_id_parts",
    "suffix_related",
    "trimmed_fallback",
]

#: How many entries of a report are kept before only those a declared case
#: can match are (:func:`key_filter`).
KEEP_ALL = 1000

#: The most entries of one report a reader keeps: far more than the
#: declared cases and their reruns (several entries of one test) need.
MAX_KEPT = 8 * MAX_CASES
#: The most characters the names and keys of the kept entries hold in all.
MAX_KEPT_TEXT = 32 << 20


class EntryBudget:
    """Counts what a reader keeps of one report (module docstring)."""

    __slots__ = ("entries", "text")

    def __init__(self) -> None:
        self.entries = 0
        self.text = 0

    def take(self, keys: Sequence[str], trimmed: Sequence[str]) -> bool:
        """Count one more entry kept under ``keys`` and ``trimmed``; whether
        the report is still within the bounds."""
        self.entries += 1
        self.text += sum(map(len, keys)) + sum(map(len, trimmed))
        return self.entries <= MAX_KEPT and self.text <= MAX_KEPT_TEXT

    def why(self) -> str:
        """Why a report past the bounds is refused."""
        return (
            f"more of its tests can be declared cases than a report may keep "
            f"({MAX_KEPT} tests, {MAX_KEPT_TEXT} characters of names): the same test "
            "listed over and over, or a crowd of tests under one name"
        )


#: A reader's matching rules over one index: a declared id to its entries.
Matcher = Callable[[str], list[TestOutcome]]


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
    """Report entries by key; with ``trimmed``, by their keys with the names
    trimmed of surrounding whitespace (:attr:`TestOutcome.trimmed`)."""

    def __init__(self, entries: Iterable[TestOutcome], *, trimmed: bool = False) -> None:
        self.entries = list(entries)
        self.trimmed = trimmed
        self._by_key: dict[str, list[TestOutcome]] = {}
        for entry in self.entries:
            keys = (entry.trimmed or entry.keys) if trimmed else entry.keys
            for key in dict.fromkeys(keys):
                self._by_key.setdefault(key, []).append(entry)

    def label(self, entry: TestOutcome) -> str:
        """How ``entry`` is named in this index: its label, trimmed in a
        trimmed index."""
        return entry.trimmed[0] if self.trimmed and entry.trimmed else entry.label

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


def trimmed_fallback(
    rules: Callable[[EntryIndex], Matcher], entries: Sequence[TestOutcome]
) -> Matcher:
    """``rules`` over ``entries``; for an id they find nothing for, ``rules``
    over the entries' names trimmed of surrounding whitespace (when any
    entry has such a name)."""
    exact = rules(EntryIndex(entries))
    if not any(entry.trimmed for entry in entries):
        return exact
    loose = rules(EntryIndex(entries, trimmed=True))

    def match(case_id: str) -> list[TestOutcome]:
        return exact(case_id) or loose(case_id)

    return match


def _after_separators(text: str, separators: str) -> Iterable[str]:
    """What follows each separator in ``text``: ``a/b/c`` -> ``b/c``, ``c``."""
    for separator in separators:
        at = text.find(separator)
        while at != -1:
            if at + 1 < len(text):
                yield text[at + 1 :]
            at = text.find(separator, at + 1)


def key_filter(
    case_ids: Iterable[str],
    probes: Callable[[str], Iterable[str]],
    suffix_separators: str = "",
    suffix_ids: Callable[[str], bool] = lambda case_id: False,
) -> Callable[[Sequence[str]], bool]:
    """Whether some declared case can match an entry with the given keys,
    under rules that look up the keys ``probes(case_id)`` exactly and, for
    the ids ``suffix_ids`` accepts, every key :func:`suffix_related` to the
    id after one of ``suffix_separators``. Each id is taken as declared and
    without its ``[params]`` (the legacy merged rule looks that up too)."""
    exact: set[str] = set()
    related: set[str] = set()  # ids some key may end with (after a separator)
    for declared in case_ids:
        for case_id in dict.fromkeys((declared, strip_parameters(declared))):
            exact.update(probes(case_id))
            if suffix_separators and suffix_ids(case_id):
                exact.add(case_id)
                related.add(case_id)
                exact.update(_after_separators(case_id, suffix_separators))

    def wanted(keys: Sequence[str]) -> bool:
        for key in keys:
            if key in exact:
                return True
            if related:  # written out: this runs for every entry of the report
                for separator in suffix_separators:
                    at = key.find(separator)
                    while at != -1:
                        if key[at + 1 :] in related:
                            return True
                        at = key.find(separator, at + 1)
        return False

    return wanted
