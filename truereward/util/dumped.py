"""JSON forms written by pydantic: :class:`Dumped` gives a dataclass
``to_json()``, its fields as JSON values through pydantic's serializer, so
no JSON form is written out field by field.

A field's JSON comes from its annotation: ``Field(serialization_alias=...)``
for a camelCase key, ``Field(exclude=True)`` or ``Field(exclude_if=...)``
for what is left out, ``@computed_field`` for a derived figure.
"""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

__all__ = ["Dumped"]

# One adapter per type, built on its first dump: importing costs nothing.
_ADAPTERS: dict[type, TypeAdapter[Any]] = {}


class Dumped:
    """A mixin (no slots of its own) for dataclasses: :meth:`to_json`."""

    __slots__ = ()

    def to_json(self) -> dict[str, Any]:
        """The fields as JSON values, under their aliases."""
        kind = type(self)
        adapter = _ADAPTERS.get(kind) or _ADAPTERS.setdefault(kind, TypeAdapter(kind))
        dumped: dict[str, Any] = adapter.dump_python(self, mode="json", by_alias=True)
        return dumped
