"""The registry of check types.

A check type is a name, a parser for its own parameters and a pure function
that measures one case. Built-in types live one per module in
:mod:`truereward.checks.kinds` and register themselves when imported; the
package is scanned the first time a type is looked up, so adding a check
type is adding one file there. Other packages call :func:`register`.

The parameters every check shares (``type``, ``required``, ``min``) are read
by :mod:`truereward.checks.spec`; a type's ``parse`` reads the rest and
returns them validated (they travel with the result, see
:class:`truereward.checks.model.CheckResult`).
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .context import CaseContext
from .model import Measurement

__all__ = ["BadCheck", "CheckType", "GaveUp", "Warn", "check_names", "get_check", "register"]

#: Receives a warning about how an input was read.
Warn = Callable[[str], None]


class BadCheck(ValueError):
    """A check that cannot be run. The message names the parameter."""


class GaveUp(Exception):
    """A check that could not decide within the grader's bounds (a regular
    expression that ran out of time on this output). Raised by ``measure``;
    the case is then not scored (an error of the case, score ``None``,
    never a 0 the output did not earn). The message says which bound."""


@dataclass(frozen=True)
class CheckType:
    """A kind of check.

    ``parse(check, case, warn)`` validates the type's own parameters in the
    raw check object (and what it takes from the case, such as ``sources``)
    and returns them (raising :class:`BadCheck`); ``measure(params, context)``
    scores one case with them and returns a value in [0, 1], or raises
    :class:`GaveUp` when it cannot decide within the bounds (its time bound
    is ``context.remaining()`` at most)."""

    name: str
    description: str
    parse: Callable[[Mapping[str, Any], Mapping[str, Any], Warn], dict[str, Any]]
    measure: Callable[[Mapping[str, Any], CaseContext], Measurement]


_types: dict[str, CheckType] = {}
_lock = threading.Lock()
_builtins_loaded = False


def register(check: CheckType) -> CheckType:
    """Register ``check``. The same object again is a no-op; another type
    under a taken name is a ``ValueError`` (a name never changes meaning)."""
    with _lock:
        existing = _types.get(check.name)
        if existing is not None and existing is not check:
            raise ValueError(f"check type {check.name!r} is already registered")
        _types[check.name] = check
    return check


def _load_builtins() -> None:
    global _builtins_loaded
    if _builtins_loaded:
        return
    from . import kinds

    for module in pkgutil.iter_modules(kinds.__path__):
        importlib.import_module(f"{kinds.__name__}.{module.name}")
    _builtins_loaded = True


def get_check(name: str) -> CheckType | None:
    """The check type registered under ``name``, or None."""
    found = _types.get(name)
    if found is None and not _builtins_loaded:
        _load_builtins()
        found = _types.get(name)
    return found


def check_names() -> list[str]:
    """Every registered check type, sorted."""
    _load_builtins()
    return sorted(_types)
