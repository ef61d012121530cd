"""Stopping a sweep's grading without cutting a run's publish.

A :class:`Halt` is shared by a flow run's pipeline and its publish steps:
once :meth:`Halt.stop` is called no run's publish starts, the ones started
finish their whole file set (:meth:`Halt.wait_idle`, bounded), and
:meth:`Halt.published` and :meth:`Halt.outcomes` say what was published,
even by task runs that never reported back. Thread-safe and Prefect-free.
docs/prefect.md, "When the Prefect server goes away", describes its use.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .steps import PublishedRun

__all__ = ["PUBLISHED", "Halt"]

#: The publish decisions that leave the run's grade published.
PUBLISHED = ("created", "replaced", "unchanged", "repaired")


class Halt:
    """Whether grading goes on, and the runs being published (module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._why: str | None = None
        self._publishing: dict[str, int] = {}  # run -> publishes of it in progress
        self._published: dict[str, int] = {}
        self._chunks: dict[str, dict[str, PublishedRun]] = {}

    @property
    def why(self) -> str | None:
        """Why grading stopped, or ``None`` while it goes on."""
        return self._why

    def stop(self, why: str) -> bool:
        """Stop grading: no run's publish starts from now on. Returns whether
        this call stopped it (the first reason stands)."""
        with self._lock:
            if self._why is not None:
                return False
            self._why = why
            self._lock.notify_all()
            return True

    @contextmanager
    def publishing(self, run: str) -> Iterator[bool]:
        """Around one run's publish: yields ``False`` (publish nothing) once
        stopped, else ``True``, and the run counts as publishing until the
        block ends. The check and the count are one step, so a stop never
        misses a publish that had started."""
        with self._lock:
            allowed = self._why is None
            if allowed:
                self._publishing[run] = self._publishing.get(run, 0) + 1
        try:
            yield allowed
        finally:
            if allowed:
                with self._lock:
                    left = self._publishing[run] - 1
                    if left:
                        self._publishing[run] = left
                    else:
                        del self._publishing[run]
                    self._lock.notify_all()

    def ended(self, chunk: str, published: PublishedRun) -> None:
        """Note what a run's publish came to (``chunk``: the name of its chunk)."""
        with self._lock:
            if not published.failed:
                self._published[published.decision] = self._published.get(published.decision, 0) + 1
            self._chunks.setdefault(chunk, {})[published.record.run] = published

    def collected(self, chunk: str) -> None:
        """The pipeline has the chunk's result: forget its runs' outcomes."""
        with self._lock:
            self._chunks.pop(chunk, None)

    def outcomes(self, chunk: str) -> dict[str, PublishedRun]:
        """What each run of ``chunk`` that was published (or failed to be)
        came to, by run, until :meth:`collected`."""
        with self._lock:
            return dict(self._chunks.get(chunk, {}))

    def published(self) -> dict[str, int]:
        """Runs published so far, by decision (``created``, ``unchanged``...)."""
        with self._lock:
            return dict(sorted(self._published.items()))

    def wait_idle(self, timeout: float) -> list[str]:
        """Wait until no run is publishing, at most ``timeout`` seconds;
        returns the runs still publishing then (empty: none)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._publishing:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._lock.wait(left)
            return sorted(self._publishing)
