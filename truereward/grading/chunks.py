"""Runs in chunks: the unit a task run grades.

Orchestrating a task run costs milliseconds (an API round trip, state
changes); grading a run of twenty cases costs about as much. So a large
sweep is graded in chunks of runs, one task run per step per chunk, and a
small sweep one run per chunk, so each run has task runs of its own named
after it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from .plan import RunJob

__all__ = ["MAX_AUTO_CHUNK", "Chunk", "chunk_size_for", "chunked"]

#: The largest chunk :func:`chunk_size_for` chooses.
MAX_AUTO_CHUNK = 100


@dataclass(frozen=True)
class Chunk:
    """Consecutive runs graded by one task run per step."""

    jobs: tuple[RunJob, ...]

    def __post_init__(self) -> None:
        if not self.jobs:
            raise ValueError("a chunk holds at least one run")

    @property
    def name(self) -> str:
        """The run's id for a chunk of one; ``<first>..<last>`` otherwise
        (what task run names show)."""
        first, last = self.jobs[0].run, self.jobs[-1].run
        return first if len(self.jobs) == 1 else f"{first}..{last}"

    def __len__(self) -> int:
        return len(self.jobs)


def chunk_size_for(runs: int, concurrency: int) -> int:
    """The default chunk size: every worker gets about four chunks (so a
    slow chunk does not leave the others idle), no chunk exceeds
    :data:`MAX_AUTO_CHUNK`, and a sweep smaller than four chunks per worker
    is graded one run per chunk. Zero runs give 1."""
    if runs <= 0 or concurrency <= 0:
        return 1
    per_worker = 4 * concurrency
    return max(1, min(MAX_AUTO_CHUNK, -(-runs // per_worker)))


def chunked(jobs: Iterable[RunJob], size: int) -> Iterator[Chunk]:
    """``jobs`` in order, ``size`` at a time (the last chunk may be smaller),
    taken from the iterable only as chunks are asked for."""
    if size < 1:
        raise ValueError(f"a chunk size is at least 1, got {size}")
    iterator = iter(jobs)
    while batch := tuple(itertools.islice(iterator, size)):
        yield Chunk(jobs=batch)
