"""Named things of one kind (readers, schemes, check types, refusal codes),
found through one entry-point group.

A :class:`Registry` holds what was registered in this process and finds the
rest through its entry-point group (one item per entry point, loaded when
asked for, or a batch per entry point with ``expand``; a ``fallback`` for
names given as import paths). A name never changes meaning. docs/design.md,
"One of each", gives the rules.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import EntryPoint, EntryPoints, entry_points
from typing import Any, Generic, Protocol, TypeVar, cast

from .exceptions import UnknownName

__all__ = ["Registry", "named"]

T = TypeVar("T")


@functools.cache
def _installed() -> EntryPoints:
    """Every entry point of the installed distributions, read once a process
    for all registries (each read scans every distribution's metadata)."""
    # Python 3.11 returns SelectableGroups, whose select() is the same.
    return cast(EntryPoints, entry_points())


class _Named(Protocol):
    @property
    def name(self) -> str: ...


N = TypeVar("N", bound=_Named)


def named(kind: str, cls: type[N]) -> Callable[[str, Any], N]:
    """A ``check`` for items that carry their own name (a scheme, a check
    type): what an entry point loaded must be an instance of ``cls``
    (``TypeError`` otherwise) whose ``name`` is the entry point's name
    (``ValueError`` otherwise: a name means one item)."""

    def check(name: str, value: Any) -> N:
        if not isinstance(value, cls):
            raise TypeError(
                f"a {kind} entry point names a {cls.__name__}, got {type(value).__name__}"
            )
        if value.name != name:
            raise ValueError(f"the entry point {name!r} names the {kind} {value.name!r}")
        return value

    return check


class Registry(Generic[T]):
    """Items of one ``kind`` by name; see the module docstring.

    ``check(name, loaded)`` turns what an entry point loaded into the item
    (raising ``TypeError`` or ``ValueError`` when it is not one); ``expand``,
    when given, turns it into several ``(name, item)`` pairs instead.
    A name that is unknown or cannot be loaded raises
    :class:`~truereward.util.exceptions.UnknownName` whose message names the
    known ones, or why loading failed. ``plural`` is the
    kind's plural in messages (default: ``kind + "s"``). ``fallback(name)``
    (with ``check`` only) gives the entry-point value to load for a name
    that is neither registered nor an entry point, or ``None``.
    """

    def __init__(
        self,
        kind: str,
        group: str,
        *,
        check: Callable[[str, Any], T] | None = None,
        expand: Callable[[str, Any], Iterable[tuple[str, T]]] | None = None,
        plural: str | None = None,
        fallback: Callable[[str], str | None] | None = None,
    ) -> None:
        if (check is None) == (expand is None):
            raise ValueError("a registry takes exactly one of check and expand")
        if fallback is not None and expand is not None:
            raise ValueError("a registry with expand takes no fallback")
        self.kind = kind
        self.group = group
        self._check = check
        self._expand = expand
        self._fallback = fallback
        self.plural = plural or f"{kind}s"
        self._lock = threading.RLock()
        self._items: dict[str, T] = {}
        self._fallen: dict[str, T] = {}
        self._points: dict[str, EntryPoint] | None = None
        self._expanded = False

    def _entry_points(self) -> dict[str, EntryPoint]:
        if self._points is None:
            self._points = {point.name: point for point in _installed().select(group=self.group)}
        return self._points

    def register(self, name: str, item: T) -> T:
        """Add ``item`` under ``name``; returns it."""
        self.register_all({name: item})
        return item

    def register_all(self, items: Mapping[str, T]) -> None:
        """Add every item, or none: a name taken by another item rejects the
        whole batch with ``ValueError``. A name an installed entry point
        declares (one item each) is taken whether or not it was looked up
        yet; a batch's names (``expand``) are known once the batches load,
        which then warn of a name taken differently."""
        with self._lock:
            # Loaded first: registered before the first lookup, a fake
            # 'gated-binary/1' was taken (a test that ran first in a pytest
            # worker gave every later fold in it a reward of 0.5).
            if self._expand is None:
                # The batch's names an entry point declares, in the batch's order.
                for name in filter(self._entry_points().__contains__, items):
                    with contextlib.suppress(UnknownName):  # a broken plug-in holds nothing
                        self.find(name)  # a name already loaded returns at once
            for name, item in items.items():
                taken = self._items.get(name)
                if taken is not None and taken != item:
                    raise ValueError(
                        f"{self.kind} {name!r} is already registered differently "
                        f"({taken!r}, not {item!r})"
                    )
            self._items.update(items)

    def find(self, name: str) -> T | None:
        """The item named ``name``, or ``None``; :class:`~truereward.util.exceptions.UnknownName`
        when its entry point (or ``fallback`` value) cannot be loaded or
        does not load an item."""
        with self._lock:
            found = self._items.get(name)
            if found is None:
                found = self._fallen.get(name)
            if found is not None:
                return found
            if self._expand is not None:
                self._load_every_entry_point()
                return self._items.get(name)
            point = self._entry_points().get(name)
            kept = self._items
            if point is None and self._fallback is not None:
                value = self._fallback(name)
                if value is not None:
                    point = EntryPoint(name, value, self.group)
                    kept = self._fallen
            if point is None:
                return None
            assert self._check is not None
            try:
                item = self._check(name, point.load())
            except Exception as error:  # whatever the plug-in raised, named in the message
                message = f"{self.kind} {name!r} ({point.value}) cannot be loaded: {error}"
                raise UnknownName(self.kind, name, message) from error
            kept[name] = item
            return item

    def get(self, name: str) -> T:
        """The item named ``name``; :class:`~truereward.util.exceptions.UnknownName` otherwise."""
        found = self.find(name)
        if found is None:
            known = ", ".join(self.names()) or "none"
            raise UnknownName(
                self.kind, name, f"unknown {self.kind} {name!r}; known {self.plural}: {known}"
            )
        return found

    def names(self) -> list[str]:
        """Every name known in this process, sorted (entry points not loaded
        yet included)."""
        with self._lock:
            if self._expand is not None:
                self._load_every_entry_point()
                return sorted(self._items)
            return sorted({*self._items, *self._entry_points()})

    def items(self) -> dict[str, T]:
        """Every item, loading every entry point."""
        with self._lock:
            for name in self.names():
                self.find(name)
            return dict(sorted(self._items.items()))

    def _load_every_entry_point(self) -> None:
        if self._expanded:
            return
        self._expanded = True
        assert self._expand is not None
        for point in self._entry_points().values():
            try:
                self.register_all(dict(self._expand(point.name, point.load())))
            except Exception as error:  # noqa: BLE001 - a plug-in must not break the rest
                warnings.warn(
                    f"truereward: the {self.kind} entry point {point.name!r} ({point.value}) "
                    f"could not be loaded: {error}",
                    RuntimeWarning,
                    stacklevel=3,
                )
