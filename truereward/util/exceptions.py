"""The root of every exception the package raises, and the one error for a
name nobody registered.

Every exception class in ``truereward`` derives from :class:`TruerewardError`
(keeping its own standard base, ``ValueError``, ``OSError`` or
``LookupError``, where callers catch that), so ``except TruerewardError``
catches whatever the library raises on purpose.
"""

from __future__ import annotations

__all__ = ["TruerewardError", "UnknownName"]


class TruerewardError(Exception):
    """An error truereward raises on purpose; every exception class of the
    package derives from it."""


class UnknownName(TruerewardError, LookupError, ValueError):
    """A name no registry knows, or whose plug-in cannot be loaded: a reader,
    a scheme, a refusal code, a criterion or check kind. ``kind`` says which
    (``"reader"``, ``"scheme"``, ``"refusal code"``, ...), ``name`` the name
    asked for; the message lists the known names, or why loading failed.
    A ``LookupError`` and a ``ValueError`` both, for callers of either
    earlier error."""

    def __init__(self, kind: str, name: object, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.name = name
