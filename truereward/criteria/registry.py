"""The registry of criterion kinds.

Kinds are found through the entry-point group ``truereward.criteria``
(:class:`truereward.util.registry.Registry`): the entry point's name is the
kind's name and it names a :class:`~.kind.CriterionKind`. The built-ins live
one per module in :mod:`truereward.criteria.kinds` and are listed in
``pyproject.toml`` like any other package's; a kind is imported when first
asked for (an image criterion does not import Pillow to grade a file's
text). A program may also :func:`register` one.
"""

from __future__ import annotations

from ..util.registry import Registry, named
from .kind import CriterionKind

__all__ = ["ENTRY_POINT_GROUP", "criterion_names", "get_criterion", "register"]

#: The entry-point group criterion kinds are found through.
ENTRY_POINT_GROUP = "truereward.criteria"


_KINDS: Registry[CriterionKind] = Registry(
    "criterion",
    ENTRY_POINT_GROUP,
    check=named("criterion", CriterionKind),
    plural="criteria",
)


def register(kind: CriterionKind) -> CriterionKind:
    """Register ``kind``. The same kind again is a no-op; another kind under
    a taken name is a ``ValueError`` (a name never changes meaning)."""
    return _KINDS.register(kind.name, kind)


def get_criterion(name: str) -> CriterionKind:
    """The kind registered as ``name``;
    :class:`~truereward.util.exceptions.UnknownName` otherwise."""
    return _KINDS.get(name)


def criterion_names() -> list[str]:
    """Every known kind, sorted."""
    return _KINDS.names()
