"""The registry of check types.

A check type is a name, a parser for its own parameters and a pure function
that measures one case. Types are found through the entry-point group
``truereward.checks`` (built-ins one per module of
:mod:`truereward.checks.kinds`, listed in ``pyproject.toml``), loaded when
first asked for; :func:`register` adds one. The parameters every check
shares (``type``, ``required``, ``min``) are read by
:mod:`truereward.checks.spec`, a type's ``parse`` reads and validates the
rest. docs/checks.md lists the types.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..util.exceptions import TruerewardError
from ..util.registry import Registry, named
from .context import CaseContext
from .model import Measurement

#: The entry-point group check types are found through.
ENTRY_POINT_GROUP = "truereward.checks"

__all__ = [
    "ENTRY_POINT_GROUP",
    "BadCheck",
    "CheckType",
    "GaveUp",
    "Warn",
    "check_names",
    "get_check",
    "register",
]

#: Receives a warning about how an input was read.
Warn = Callable[[str], None]


class BadCheck(TruerewardError, ValueError):
    """A check that cannot be run. The message names the parameter."""


class GaveUp(TruerewardError):
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


_TYPES: Registry[CheckType] = Registry(
    "check type",
    ENTRY_POINT_GROUP,
    check=named("check type", CheckType),
)


def register(check: CheckType) -> CheckType:
    """Register ``check``. The same type again is a no-op; another type
    under a taken name is a ``ValueError`` (a name never changes meaning)."""
    return _TYPES.register(check.name, check)


def get_check(name: str) -> CheckType | None:
    """The check type registered under ``name``, or None."""
    return _TYPES.find(name)


def check_names() -> list[str]:
    """Every known check type, sorted."""
    return _TYPES.names()
