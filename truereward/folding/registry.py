"""The registry of reward schemes.

A scheme is a name and a pure function from the tally of a gradable run to
its reward. The name is written into every document, and a scheme's
behaviour never changes under the same name: a change is a new name
(``/2``). The shared refusal rules (:mod:`truereward.folding.rules`) apply to
every scheme; a scheme only says what the reward of a gradable run is.

Built-in schemes live one per module in :mod:`truereward.folding.schemes` and
register themselves when imported; the package is scanned the first time a
scheme is looked up, so adding a scheme is adding one file there. Other
packages call :func:`register`.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Callable
from dataclasses import dataclass

from .rules import Tally

__all__ = ["Scheme", "UnknownScheme", "get_scheme", "register", "scheme_names"]


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


_schemes: dict[str, Scheme] = {}
_lock = threading.Lock()
_builtins_loaded = False


def register(scheme: Scheme) -> Scheme:
    """Register ``scheme``. Registering the same object again is a no-op;
    another scheme under a taken name is a ``ValueError`` (a name never
    changes meaning)."""
    if "/" not in scheme.name or not scheme.name.rsplit("/", 1)[1].isdigit():
        raise ValueError(f"a scheme name is 'name/version', got {scheme.name!r}")
    with _lock:
        existing = _schemes.get(scheme.name)
        if existing is not None and existing is not scheme:
            raise ValueError(f"scheme {scheme.name!r} is already registered")
        _schemes[scheme.name] = scheme
    return scheme


def _load_builtins() -> None:
    global _builtins_loaded
    if _builtins_loaded:
        return
    from . import schemes

    for module in pkgutil.iter_modules(schemes.__path__):
        importlib.import_module(f"{schemes.__name__}.{module.name}")
    _builtins_loaded = True


def get_scheme(name: str) -> Scheme:
    """The scheme registered under ``name``; :class:`UnknownScheme` otherwise."""
    found = _schemes.get(name)
    if found is None:
        _load_builtins()
        found = _schemes.get(name)
    if found is None:
        raise UnknownScheme(f"unknown scheme {name!r}; known schemes: {', '.join(scheme_names())}")
    return found


def scheme_names() -> list[str]:
    """Every registered scheme name, sorted."""
    _load_builtins()
    return sorted(_schemes)
