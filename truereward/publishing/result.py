"""What a publish did."""

from __future__ import annotations

from dataclasses import dataclass

from .decide import PublishDecision

__all__ = ["PublishResult"]


@dataclass(frozen=True)
class PublishResult:
    """The outcome of one successful publish.

    ``decision`` says whether the grade was created, replaced another, or was
    already there (``SAME``: then ``written`` lists only what had to be
    repaired after an earlier publish was interrupted, usually nothing).
    ``written`` and ``removed`` name the files, in the order it touched them;
    ``kept`` the name the replaced grade was set aside under
    (``grade.previous.json``), when it was asked to be kept.
    """

    target: str
    digest: str
    decision: PublishDecision
    written: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    kept: str | None = None
    #: False when the caller asked to settle the set itself
    #: (``publish_objects(settle=False)``).
    settled: bool = True

    @property
    def changed(self) -> bool:
        """Whether anything at the target was written or removed."""
        return bool(self.written or self.removed)
