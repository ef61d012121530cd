"""Immutable containers for the fields of our records.

A frozen pydantic model does not stop ``row.measures["ms"] = nan``, so every
container in a row, a fold or a grade document is immutable: sequences are
tuples (:data:`Items`), mappings :class:`FrozenDict`, free-form JSON
:data:`FrozenJsonObject` (:func:`deep_freeze`); :func:`is_empty` and
:func:`is_absent` pick the fields a dump leaves out. docs/design.md,
"Immutable records", gives the rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar, get_args

from pydantic import GetCoreSchemaHandler, JsonValue, Strict
from pydantic_core import CoreSchema, core_schema

__all__ = [
    "EMPTY",
    "FrozenDict",
    "FrozenJsonObject",
    "FrozenMap",
    "Items",
    "deep_freeze",
    "freeze",
    "is_absent",
    "is_empty",
    "thaw",
]

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


class FrozenDict(dict[K, V]):
    """A ``dict`` that cannot be changed after it is made."""

    __slots__ = ()

    def _immutable(self, *_: object, **__: object) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is immutable")

    __setitem__ = __delitem__ = __ior__ = _immutable
    clear = pop = popitem = setdefault = update = _immutable

    def __reduce__(self) -> tuple[type[FrozenDict[K, V]], tuple[dict[K, V]]]:
        # dict's default reduction sets the items one by one after creating
        # an empty instance, which __setitem__ refuses.
        return (type(self), (dict(self),))

    def __copy__(self) -> FrozenDict[K, V]:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict[K, V]:
        return self  # its values are immutable too where it matters (see deep_freeze)

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        # Validated (and serialised) as the dict it is, then frozen: pydantic
        # hands over a new dict, so the class takes it directly (cheaper than
        # freeze(), a Python call, for every row).
        args = get_args(source) or (Any, Any)
        return core_schema.no_info_after_validator_function(
            cls,
            handler.generate_schema(dict[args[0], args[1]]),  # type: ignore[valid-type]
        )


#: The empty frozen mapping, shared.
EMPTY: FrozenDict[Any, Any] = FrozenDict()


def freeze(value: Mapping[K, V]) -> FrozenDict[K, V]:
    """``value`` as a :class:`FrozenDict` (itself when it is one)."""
    if isinstance(value, FrozenDict):
        return value
    return FrozenDict(value) if value else EMPTY


def is_empty(value: Any) -> bool:
    """Whether a field holds nothing (an empty container or string): the
    test of the fields a dump leaves out when empty
    (``Field(exclude_if=is_empty)``, pydantic's own serializer, not a
    Python wrap of it), so what was written before such a field existed
    keeps its bytes."""
    return not value


def is_absent(value: Any) -> bool:
    """Whether an optional field is ``None``: the same, for the fields a
    dump leaves out when absent (``Field(exclude_if=is_absent)``)."""
    return value is None


def deep_freeze(value: Any) -> Any:
    """JSON ``value`` with every object a :class:`FrozenDict` and every array a
    tuple, at any depth (scalars as they are)."""
    if isinstance(value, dict):
        return FrozenDict({key: deep_freeze(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(deep_freeze(item) for item in value)
    return value


def thaw(value: Any) -> Any:
    """The inverse of :func:`deep_freeze`: plain dicts and lists at every
    depth."""
    if isinstance(value, dict):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(item) for item in value]
    return value


class _FrozenJson:
    """Validation as a JSON object (after :func:`thaw`, so a frozen one is
    valid input again), then :func:`deep_freeze`; serialised by inference
    (a FrozenDict is a dict, a tuple a JSON array)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(
            deep_freeze,
            core_schema.no_info_before_validator_function(
                thaw, handler.generate_schema(dict[str, JsonValue])
            ),
            serialization=core_schema.any_schema(),
        )


if TYPE_CHECKING:
    # To a type checker a field is the read-only interface (so a list or a
    # dict is a valid argument, and changing one in place is an error); at
    # run time it is the immutable container.
    Items = Sequence[T]
    FrozenMap = Mapping[K, V]
    FrozenJsonObject = Mapping[str, Any]
else:
    #: A sequence field: a tuple, given as a tuple or a list.
    Items = Annotated[tuple[T, ...], Strict(False)]
    #: A mapping field: a :class:`FrozenDict`, given as any dict.
    FrozenMap = FrozenDict
    #: A free-form JSON object, frozen at every depth.
    FrozenJsonObject = Annotated[FrozenDict[str, Any], _FrozenJson]
