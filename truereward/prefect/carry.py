"""What a task run carries from one of its attempts to the next.

Prefect retries a task by calling its function again, in the same process;
the ``read`` and ``publish`` tasks keep their progress over a chunk here,
keyed by the task run's id, so a retry reads (or publishes) again only the
runs that need it and their earlier attempts are remembered. An entry is
dropped when its task run returns or fails for good. Why a chunk's retry
carries state: docs/prefect.md, "How grade-run schedules its chunks".
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar
from uuid import UUID

__all__ = ["Carry"]

T = TypeVar("T")


class Carry(Generic[T]):
    """Progress of type ``T`` per task run id, thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: dict[UUID, T] = {}

    def get(self, key: UUID, make: Callable[[], T]) -> T:
        """The progress of task run ``key``, made on its first attempt."""
        with self._lock:
            found = self._items.get(key)
            if found is None:
                found = self._items[key] = make()
            return found

    def drop(self, key: UUID) -> None:
        """Forget task run ``key`` (it returned or failed for good)."""
        with self._lock:
            self._items.pop(key, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
