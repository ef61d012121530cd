"""Building pydantic models from values this package computed itself.

Validation is for input. The fold and the document build their own models
from values they just computed, where validating again would only cost time
(``model_construct`` costs several microseconds a call, which dominated the
fold). :func:`trusted` sets the instance state the way ``model_construct``
does, without its default handling: every field must be given.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

__all__ = ["trusted"]

M = TypeVar("M", bound=BaseModel)

_set = object.__setattr__


def trusted(cls: type[M], values: dict[str, Any], fields_set: set[str] | None = None) -> M:
    """An instance of ``cls`` holding ``values`` (every field, already
    valid), without validation. Only for values computed or checked by this
    package. ``fields_set`` is what pydantic reports as explicitly set
    (default: every field)."""
    instance = cls.__new__(cls)
    _set(instance, "__dict__", values)
    _set(instance, "__pydantic_fields_set__", set(values) if fields_set is None else fields_set)
    _set(instance, "__pydantic_extra__", None)
    _set(instance, "__pydantic_private__", None)
    return instance
