"""The registry of reward schemes.

A scheme is a name and a pure function from the tally of a gradable run to
its reward. The name is written into every document, and a scheme's
behaviour never changes under the same name: a change is a new name
(``/2``). The shared refusal rules (:mod:`truereward.folding.rules`) apply to
every scheme; a scheme only says what the reward of a gradable run is.

Schemes are found through the entry-point group ``truereward.schemes``
(:class:`truereward.registry.Registry`): the entry point's name is the
scheme's name and it names a :class:`Scheme` object. The built-ins live one
per module in :mod:`truereward.folding.schemes` and are listed in
``pyproject.toml`` like any other package's; a scheme is loaded when its
name is first asked for. A program may also :func:`register` one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..registry import Registry, named
from .rules import Tally

__all__ = ["ENTRY_POINT_GROUP", "Scheme", "UnknownScheme", "get_scheme", "register", "scheme_names"]

#: The entry-point group schemes are found through.
ENTRY_POINT_GROUP = "truereward.schemes"


@dataclass(frozen=True)
class Scheme:
    """A named, versioned reward rule. ``reward`` is called only for a
    gradable run and must return a finite float; ``bounds`` (inclusive), when
    given, are the rewards it can give, so that a reader of stored documents
    (a sweep summary) can refuse one whose reward no fold could have made."""

    name: str
    description: str
    reward: Callable[[Tally], float]
    bounds: tuple[float, float] | None = None


class UnknownScheme(ValueError):
    """A scheme name nobody registered. The message lists the known ones."""


_a_scheme = named("scheme", Scheme)


def _checked(name: str, value: Any) -> Scheme:
    """``value`` as the scheme named ``name`` (:func:`~truereward.registry.named`),
    a name of the form ``name/version``."""
    scheme = _a_scheme(name, value)
    if "/" not in name or not name.rsplit("/", 1)[1].isdigit():
        raise ValueError(f"a scheme name is 'name/version', got {name!r}")
    return scheme


_SCHEMES: Registry[Scheme] = Registry(
    "scheme", ENTRY_POINT_GROUP, check=_checked, missing=lambda _, message: UnknownScheme(message)
)


def register(scheme: Scheme) -> Scheme:
    """Register ``scheme``. Registering the same scheme again is a no-op;
    another scheme under a taken name is a ``ValueError`` (a name never
    changes meaning), and so is a name that is not ``name/version``."""
    return _SCHEMES.register(scheme.name, _checked(scheme.name, scheme))


def get_scheme(name: str) -> Scheme:
    """The scheme registered under ``name``; :class:`UnknownScheme` otherwise."""
    return _SCHEMES.get(name)


def scheme_names() -> list[str]:
    """Every known scheme name, sorted."""
    return _SCHEMES.names()
