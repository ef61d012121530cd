"""EvaluationCase and Dataset: evaluation subjects with stable identities.

An :class:`EvaluationCase` is one subject with an ``id`` (a case id: 1 to 512
characters, no surrounding whitespace, no control characters) and
``metadata`` (strict JSON values, nested at most 64 deep). A
:class:`Dataset` is an immutable, ordered set of cases with unique ids.

Metadata is owned: a case copies the mapping it is given (deeply), and the
dataset hands out copies, so nothing done to a mapping after construction,
or to one read back, changes the dataset. Subjects are not copied (they can
be anything, including things that cannot be copied): evaluators must not
mutate them.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

from pydantic import JsonValue, TypeAdapter

from ..record.cases import check_case_id
from .jsondepth import check_json_depth

__all__ = ["Dataset", "EvaluationCase"]

T = TypeVar("T")

_METADATA: TypeAdapter[dict[str, JsonValue]] = TypeAdapter(dict[str, JsonValue])


def _owned_metadata(value: Mapping[str, Any] | None, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{where}: metadata is a mapping, got {type(value).__name__}")
    check_json_depth(dict(value), f"{where}: metadata")
    try:
        checked = _METADATA.validate_python(dict(value), strict=True)
    except ValueError as error:
        raise ValueError(f"{where}: metadata is not strict JSON: {error}") from None
    _refuse_non_finite(checked, where)
    return copy.deepcopy(checked)


def _refuse_non_finite(value: Any, where: str) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError(f"{where}: metadata holds a non-finite number ({item!r})")
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


@dataclass(frozen=True, slots=True)
class EvaluationCase(Generic[T]):
    """One evaluation subject with a stable ``id`` and owned ``metadata``."""

    id: str
    subject: T
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str):
            raise TypeError(f"a case id is a str, got {type(self.id).__name__}")
        try:
            check_case_id(self.id)
        except ValueError as error:
            raise ValueError(f"case id {self.id!r}: {error}") from None
        object.__setattr__(self, "metadata", _owned_metadata(self.metadata, f"case {self.id!r}"))

    def copy(self) -> EvaluationCase[T]:
        """The same case with its own copy of the metadata."""
        return EvaluationCase(self.id, self.subject, copy.deepcopy(self.metadata))


class Dataset(Generic[T]):
    """An immutable, ordered set of uniquely identified cases.

    ``Dataset(cases)`` or ``Dataset(cases=cases)`` take an iterable of
    cases; ``Dataset(case, case, ...)`` takes them positionally. Two cases
    with one id raise ``ValueError`` naming it. An empty dataset is allowed
    (its experiment evaluates nothing). :attr:`cases` returns copies (see
    the module docstring).
    """

    __slots__ = ("_cases", "_index")

    @overload
    def __init__(self, cases: Iterable[EvaluationCase[T]], /) -> None: ...
    @overload
    def __init__(self, *cases: EvaluationCase[T]) -> None: ...
    @overload
    def __init__(self, *, cases: Iterable[EvaluationCase[T]]) -> None: ...

    def __init__(self, *args: Any, cases: Iterable[EvaluationCase[T]] | None = None) -> None:
        if args and cases is not None:
            raise TypeError("give the cases positionally or as cases=..., not both")
        given: Iterable[Any]
        if cases is not None:
            given = cases
        elif len(args) == 1 and not isinstance(args[0], EvaluationCase):
            given = args[0]
        else:
            given = args
        if isinstance(given, str | bytes | Mapping) or not isinstance(given, Iterable):
            raise TypeError(f"a dataset takes cases, got {type(given).__name__}")
        owned: list[EvaluationCase[T]] = []
        index: dict[str, int] = {}
        for position, item in enumerate(given):
            if not isinstance(item, EvaluationCase):
                raise TypeError(f"cases[{position}] is a EvaluationCase, got {type(item).__name__}")
            if item.id in index:
                raise ValueError(
                    f"case id {item.id!r} appears twice (positions {index[item.id]} "
                    f"and {position}): ids in a dataset are unique"
                )
            index[item.id] = position
            owned.append(item.copy())
        self._cases: tuple[EvaluationCase[T], ...] = tuple(owned)
        self._index = index

    @property
    def cases(self) -> tuple[EvaluationCase[T], ...]:
        """The cases in order, each with its own copy of the metadata."""
        return tuple(case.copy() for case in self._cases)

    @property
    def ids(self) -> tuple[str, ...]:
        """The case ids in order."""
        return tuple(case.id for case in self._cases)

    def __len__(self) -> int:
        return len(self._cases)

    def __iter__(self) -> Iterator[EvaluationCase[T]]:
        return iter(self.cases)

    def __contains__(self, case_id: object) -> bool:
        return case_id in self._index

    def __getitem__(self, case_id: str) -> EvaluationCase[T]:
        """The case with this id (a copy); ``KeyError`` when there is none."""
        return self._cases[self._index[case_id]].copy()

    def __repr__(self) -> str:
        return f"Dataset({len(self)} cases)"
