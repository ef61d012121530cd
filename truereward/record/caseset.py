"""The declared case set of a task: which cases exist, and what each is for.

The fold takes a case set so that a subset can never pass for the whole: a
declared case without a result is ``CASES_MISSING``, a result outside the
set (or of another kind) ``CASE_INVALID``. A case set is a mapping ``{id:
kind}``, a list of ``{"id", "kind"}`` entries or objects with those
attributes, or an object with ``case_kinds()`` (a task spec). Invalid
declarations (a bad id, an unknown kind, an id twice) do not raise: they
are ``CASE_INVALID`` refusals, since a broken task is a reason there is no
reward, not a crash. README.md, "The rules of the fold".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from .cases import KINDS, Kind, check_case_id
from .refusal import Refusal, refusal

__all__ = ["DeclaredCases", "declared_cases"]


@dataclass(frozen=True)
class DeclaredCases:
    """A normalised case set: the valid declarations, the ids whose
    declarations were invalid, and the refusals saying why."""

    kinds: Mapping[str, Kind]
    invalid: frozenset[str] = frozenset()
    refusals: tuple[Refusal, ...] = field(default=())

    @property
    def has_fail_to_pass(self) -> bool:
        """Whether any valid declaration is a fail-to-pass case."""
        return "fail_to_pass" in self.kinds.values()


def _entries(value: object) -> list[tuple[object, object]]:
    """(id, kind) pairs in declaration order, from any accepted shape."""
    as_kinds = getattr(value, "case_kinds", None)
    if callable(as_kinds):
        value = as_kinds()
    if isinstance(value, Mapping):
        return list(value.items())
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(
            "a case set is a mapping {id: kind} or a list of {id, kind} entries, "
            f"got {type(value).__name__}"
        )
    pairs: list[tuple[object, object]] = []
    for index, entry in enumerate(value):
        if isinstance(entry, Mapping):
            pairs.append((entry.get("id"), entry.get("kind")))
        elif hasattr(entry, "id") and hasattr(entry, "kind"):
            pairs.append((entry.id, entry.kind))
        else:
            raise TypeError(
                f"case set entry {index} is a {type(entry).__name__}, not an {{id, kind}} entry"
            )
    return pairs


def declared_cases(value: object) -> DeclaredCases:
    """Normalise a case set (see the module docstring). ``TypeError`` only
    when ``value`` is not a case set at all; invalid declarations become
    refusals. An object that is already :class:`DeclaredCases` is returned
    as is."""
    if isinstance(value, DeclaredCases):
        return value
    pairs = _entries(value)
    counts = Counter(case_id for case_id, _ in pairs if isinstance(case_id, str))
    kinds: dict[str, Kind] = {}
    invalid: set[str] = set()
    problems: list[Refusal] = []
    for case_id, kind in pairs:
        if not isinstance(case_id, str):
            problems.append(
                refusal(
                    "CASE_INVALID", f"a case is declared with id {case_id!r}, which is not a string"
                )
            )
            continue
        if case_id in invalid:
            continue
        why = _declaration_problem(case_id, kind, counts[case_id])
        if why:
            invalid.add(case_id)
            problems.append(refusal("CASE_INVALID", why, case_id))
        else:
            kinds[case_id] = cast(Kind, kind)
    return DeclaredCases(kinds=kinds, invalid=frozenset(invalid), refusals=tuple(problems))


def _declaration_problem(case_id: str, kind: Any, count: int) -> str:
    try:
        check_case_id(case_id)
    except ValueError as error:
        return f"case {case_id!r} is declared with an invalid id: {error}"
    if count > 1:
        return f"case {case_id} is declared {count} times"
    if kind not in KINDS:
        return f"case {case_id} is declared with kind {kind!r}; a kind is one of {', '.join(KINDS)}"
    return ""
