"""The registry of reward schemes.

A scheme is a name and a pure function from the tally of a gradable run to
its reward; the shared refusal rules (:mod:`truereward.folding.rules`) apply
to every scheme. The name is written into every document, so a scheme's
behaviour never changes under it (a change is a new name, ``/2``). Schemes
are found through the entry-point group ``truereward.schemes`` (built-ins
one per module of :mod:`truereward.folding.schemes`, listed in
``pyproject.toml``), loaded when first asked for; :func:`register` adds one.
docs/scoring.md lists the schemes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..util.registry import Registry, named
from .rules import Tally

__all__ = [
    "ENTRY_POINT_GROUP",
    "Scheme",
    "Weighed",
    "get_scheme",
    "register",
    "scheme_names",
]

#: The entry-point group schemes are found through.
ENTRY_POINT_GROUP = "truereward.schemes"


class Weighed(NamedTuple):
    """One input of a weighing scheme: a case (its score, or 1/0 by
    verdict; ``passed``: its verdict is ``pass``) or a dimension (its value;
    ``passed``: the value is 1.0), with its weight and whether it is
    required (:mod:`truereward.folding.weighing`)."""

    value: float
    passed: bool
    weight: float
    required: bool


@dataclass(frozen=True)
class Scheme:
    """A named, versioned reward rule. ``reward`` is called only for a
    gradable run and returns a float (a run whose reward is not finite is
    refused, ``CASE_INVALID``); ``bounds`` (inclusive), when
    given, are the rewards it can give, so that a reader of stored documents
    (a sweep summary) can refuse one whose reward no fold could have made.

    A *weighing* scheme also has ``combine``: the value of weighed inputs
    (cases or dimensions, :class:`Weighed`, never empty) given a threshold;
    only such a scheme folds a dimension of dimensions, reads weights and
    required flags, and has every case's score checked to lie in [0, 1]
    (:mod:`truereward.folding.weighing`). ``threshold`` is the one it uses
    when the task declares none (``threshold/1``'s 0.5, as rewardkit's);
    ``signed``: negative weights are allowed (``weighted-sum/1`` only, as in
    rewardkit); ``needs_weight``: the weights must not sum to zero (a
    weighted mean of nothing is no value); ``needs_required``: at least one
    input must be required (``required-pass/1``)."""

    name: str
    description: str
    reward: Callable[[Tally], float]
    bounds: tuple[float, float] | None = None
    combine: Callable[[Sequence[Weighed], float | None], float] | None = None
    threshold: float | None = None
    signed: bool = False
    needs_weight: bool = False
    needs_required: bool = False


_a_scheme = named("scheme", Scheme)


def _checked(name: str, value: Any) -> Scheme:
    """``value`` as the scheme named ``name`` (:func:`~truereward.util.registry.named`),
    a name of the form ``name/version``."""
    scheme = _a_scheme(name, value)
    if "/" not in name or not name.rsplit("/", 1)[1].isdigit():
        raise ValueError(f"a scheme name is 'name/version', got {name!r}")
    return scheme


_SCHEMES: Registry[Scheme] = Registry("scheme", ENTRY_POINT_GROUP, check=_checked)


def register(scheme: Scheme) -> Scheme:
    """Register ``scheme``. Registering the same scheme again is a no-op;
    another scheme under a taken name is a ``ValueError`` (a name never
    changes meaning), and so is a name that is not ``name/version``."""
    return _SCHEMES.register(scheme.name, _checked(scheme.name, scheme))


def get_scheme(name: str) -> Scheme:
    """The scheme registered under ``name``;
    :class:`~truereward.util.exceptions.UnknownName` otherwise."""
    return _SCHEMES.get(name)


def scheme_names() -> list[str]:
    """Every known scheme name, sorted."""
    return _SCHEMES.names()
