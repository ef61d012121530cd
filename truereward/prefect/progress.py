"""A flow run's progress artifact: runs published of the runs planned.

:class:`PublishingProgress` creates a Prefect progress artifact (its value
the percentage, its description ``<published> of <total> runs published``)
when grading starts, and a daemon thread of its own brings it up to date
every :data:`PROGRESS_SECONDS` while anything changed, so the UI's flow run
page (Artifacts) and ``prefect artifact inspect <key>`` show grading move;
the grading itself never waits on those calls. A call the API refuses or
does not answer is logged once and the artifact left as it was: progress is
for people, never a reason for grading to fail.
"""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable
from typing import Any
from uuid import UUID

__all__ = ["PROGRESS_SECONDS", "PublishingProgress"]

#: Seconds between two updates of the artifact, at least.
PROGRESS_SECONDS = 1.0

log = logging.getLogger(__name__)


class PublishingProgress:
    """The progress artifact ``key`` (``None``: keyless, as a shard's) of
    ``total`` runs; ``published()`` counts the runs published so far (called
    from the artifact's thread: it must be thread-safe)."""

    def __init__(self, key: str | None, total: int, published: Callable[[], int]) -> None:
        self.key = key
        self.total = total
        self.published = published
        self.artifact: UUID | None = None
        self._shown = -1
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._failed = False

    def _values(self) -> tuple[int, float, str]:
        done = min(self.published(), self.total)
        percent = 100.0 * done / self.total if self.total else 100.0
        return done, percent, f"{done} of {self.total} runs published"

    def start(self) -> PublishingProgress:
        """Create the artifact and start bringing it up to date."""
        from prefect.artifacts import create_progress_artifact

        done, percent, said = self._values()
        try:
            created = create_progress_artifact(percent, key=self.key, description=said)
            if not isinstance(created, UUID):  # a coroutine: called inside an event loop
                raise TypeError(f"no artifact id but a {type(created).__name__}")
            self.artifact = created
            self._shown = done
        except Exception as error:  # noqa: BLE001 - progress never fails grading
            self._gave_up(error)
            return self
        context = contextvars.copy_context()  # this thread's settings: its API
        self._thread = threading.Thread(
            target=context.run, args=(self._watch,), name="truereward-progress", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and show the last count (grading has ended)."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(PROGRESS_SECONDS * 5)
        self._update()

    def _watch(self) -> None:
        while not self._stopping.wait(PROGRESS_SECONDS):
            self._update()

    def _update(self) -> None:
        if self.artifact is None or self._failed:
            return
        from prefect.artifacts import update_progress_artifact

        done, percent, said = self._values()
        if done == self._shown:
            return
        try:
            update_progress_artifact(self.artifact, percent, description=said)
            self._shown = done
        except Exception as error:  # noqa: BLE001 - progress never fails grading
            self._gave_up(error)

    def _gave_up(self, error: Any) -> None:
        self._failed = True
        log.warning(
            "the progress artifact %s is not kept up to date: %s: %s",
            self.key,
            type(error).__name__,
            " ".join(str(error).split())[:300],
        )
