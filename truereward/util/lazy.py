"""Names of a package loaded on first use.

:func:`lazy_names` builds a package's module-level ``__getattr__`` and
``__dir__`` from a table, so a submodule is imported only when one of its
names is first looked up (``import truereward`` stays light)::

    _LAZY = {"EvaluationReport": "report", "fold": ("folding", "fold")}
    __getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())

A value is the submodule holding the name, or ``(submodule, attribute)``;
it is cached in the package namespace, so each lookup runs once.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str,
    table: Mapping[str, str | tuple[str, str]],
    namespace: dict[str, Any],
    renamed: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package`` over ``table``. ``renamed``
    maps an old public name to its new one: the old name still gives the
    object, with a ``DeprecationWarning`` each time, and is not listed."""

    def __getattr__(name: str) -> Any:
        if renamed and name in renamed:
            message = f"{package}.{name} is deprecated; use {package}.{renamed[name]}"
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            name = renamed[name]
            if name in namespace:
                return namespace[name]
        try:
            where = table[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        module, attribute = (where, name) if isinstance(where, str) else where
        value = getattr(import_module(f".{module}", package), attribute)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(table))

    return __getattr__, __dir__
