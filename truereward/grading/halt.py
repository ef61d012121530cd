"""Stopping a sweep's grading without cutting a run's publish.

A :class:`Halt` is shared by a flow run's pipeline and its publish steps.
Until :meth:`Halt.stop` is called it only watches: each run's publish checks
in (:meth:`Halt.publishing`) and what it came to is noted. Once stopped:

- **no run's publish starts**; a run whose publish has started finishes its
  whole file set. The publisher writes each file whole or not at all, with
  ``reward.txt`` last, so a set cut between two files is never a wrong
  reward, but it is an unfinished set that a later publish must repair;
  letting it finish leaves none;
- :meth:`Halt.wait_idle` waits, up to a bound, for the publishes in
  progress, and names the runs still publishing when the bound passed;
- :meth:`Halt.published` counts the runs published so far by decision,
  whatever happened to the task runs that published them, so whoever ends
  the process can say what was published;
- :meth:`Halt.outcomes` gives what each run of a chunk came to, until the
  pipeline has its chunk's result (:meth:`Halt.collected`): a publish whose
  task run never reported back (its process lost the API it reports to) is
  still accounted for. Memory holds the chunks in flight, not the sweep.

Thread-safe. Prefect-free: the flow stops it when its Prefect API is lost
(:mod:`truereward.prefect.lifeline`).
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
