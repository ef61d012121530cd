"""Runs in chunks: the unit a task run grades.

Orchestrating a task run costs about as much as grading a run of twenty
cases, so a sweep is graded in chunks, one task run per step per chunk (a
sweep no larger than the chunks in flight: one run per chunk). A chunk and
what each step makes of it are :class:`Payload` objects, plain classes
Prefect takes as they are instead of walking every row looking for futures.
docs/prefect.md, "Scale" and "How grade-run schedules its chunks", and
docs/scale.md give the reasons and the figures.
"""

from __future__ import annotations

import contextlib
import itertools
import pickle
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from ..util.io import LOCAL_IO
from .plan import RunJob

__all__ = [
    "MAX_AUTO_CHUNK",
    "MAX_REMOTE_CHUNK",
    "MIN_AUTO_CHUNK",
    "Chunk",
    "Payload",
    "chunk_size_for",
    "chunked",
]

#: The largest chunk :func:`chunk_size_for` chooses for the thread runner.
#: The flow process holds the rows of every chunk in flight; larger chunks
#: made it faster but raised its peak (``infra/bench/dask_cluster.py``;
#: figures in docs/scale.md).
MAX_AUTO_CHUNK = 100
#: The largest chunk chosen for a runner whose task runs are in other
#: processes (Dask): there a task run costs a worker a fresh API client and
#: its state changes, and its result travels to the flow process, so fewer,
#: larger task runs pay, and the rows stay on the workers
#: (``infra/bench/dask_cluster.py``; figures in docs/scale.md).
MAX_REMOTE_CHUNK = 300
#: The smallest chunk :func:`chunk_size_for` chooses when the sweep has more
#: runs than chunks in flight. Each task run of a tagged task asks the server
#: for its tags' concurrency slots in a write transaction, and on SQLite
#: (Prefect's default, and its ephemeral API) eight at once collide: the
#: server answers ``503`` and the client backs off before it asks again, so
#: one-run chunks of the 30-run sample sweep were much slower than chunks of
#: 4 (docs/prefect.md, "Scale").
MIN_AUTO_CHUNK = 25


class Payload:
    """A value a task run takes or gives, which Prefect passes on without
    looking inside (module docstring). Subclasses name their attributes in
    ``__slots__`` and take them by name in ``__init__``; two payloads are
    equal when their type and attributes are.

    A payload pickles (Dask moves it between processes) as its type and
    one pickled blob of its attributes, unpacked when an attribute is first
    read. The flow process is given every finished step's result by Dask,
    only to learn its state; it never reads a chunk's rows, and unpickling
    them there was over a third of its samples (``infra/bench/dask_cluster.py
    --profile``). The worker that runs the next step unpacks them once.
    """

    # Its own slot holds the packed attributes of an unpickled payload until
    # they are read; a subclass's __slots__ are its attributes.
    __slots__: ClassVar[tuple[str, ...]] = ("_packed",)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({shown})"

    def __reduce__(self) -> tuple[Any, tuple[type[Payload], bytes]]:
        values = {name: getattr(self, name) for name in self.__slots__}
        return (_unpickled, (type(self), pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL)))

    def __getattr__(self, name: str) -> Any:
        # Called only for an attribute not set yet: one still packed.
        try:
            packed = object.__getattribute__(self, "_packed")
        except AttributeError:
            packed = None
        if name not in type(self).__slots__:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        if packed is None:
            raise AttributeError(f"this {type(self).__name__} was released: {name} is gone")
        self._set(_packed=None, **pickle.loads(packed))
        return getattr(self, name)

    def release(self) -> None:
        """Drop what the payload holds, once nothing will read it again
        (reading an attribute then raises ``AttributeError``). Prefect's
        engine keeps a task run's parameters and result in reference
        cycles, so a chunk's rows outlived it until a full garbage
        collection, whose cost grows with everything alive (docs/scale.md,
        "Where the time goes"). Released, they go as soon as the last
        reference does."""
        for name in self.__slots__:
            with contextlib.suppress(AttributeError):  # still packed, or released already
                object.__delattr__(self, name)
        object.__setattr__(self, "_packed", None)

    def _set(self, **values: Any) -> None:
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")


def _unpickled(kind: type[Payload], packed: bytes) -> Payload:
    """A payload of type ``kind`` whose attributes are unpacked from
    ``packed`` when first read."""
    made = kind.__new__(kind)
    made._set(_packed=packed)
    return made


class Chunk(Payload):
    """Consecutive runs graded by one task run per step."""

    __slots__ = ("jobs",)
    jobs: tuple[RunJob, ...]

    def __init__(self, jobs: tuple[RunJob, ...]) -> None:
        if not jobs:
            raise ValueError("a chunk holds at least one run")
        self._set(jobs=tuple(jobs))

    @property
    def name(self) -> str:
        """The run's id for a chunk of one; ``<first>..<last>`` otherwise
        (what task run names show)."""
        first, last = self.jobs[0].run, self.jobs[-1].run
        return first if len(self.jobs) == 1 else f"{first}..{last}"

    def __len__(self) -> int:
        return len(self.jobs)


def chunk_size_for(
    runs: int, concurrency: int, largest: int = MAX_AUTO_CHUNK, io_budget: int = LOCAL_IO
) -> int:
    """The default chunk size for ``runs`` runs graded ``concurrency``
    chunks at a time.

    - A large sweep gives every worker about four chunks (so a slow chunk
      does not leave the others idle), none over ``largest``
      (:data:`MAX_AUTO_CHUNK`; :data:`MAX_REMOTE_CHUNK` for a runner in
      other processes).
    - A smaller sweep gets chunks of :data:`MIN_AUTO_CHUNK` runs, or of
      ``io_budget`` runs when that is more (an object store: a chunk's reads
      and writes overlap up to the budget, so a smaller chunk overlaps no
      more and pays more task runs), or fewer when that would leave a worker
      without a chunk: then the runs are shared out, about
      ``runs / concurrency`` a chunk (orchestrating a task run costs more
      than grading a few runs).
    - A sweep of at most ``concurrency`` runs is graded one run per chunk
      (each run has task runs named after it).

    Zero runs (or no concurrency) give 1."""
    if runs <= 0 or concurrency <= 0:
        return 1
    smallest = max(MIN_AUTO_CHUNK, io_budget)
    four_each = -(-runs // (4 * concurrency))
    one_each = -(-runs // concurrency)
    return max(1, min(largest, max(four_each, min(smallest, one_each))))


def chunked(jobs: Iterable[RunJob], size: int) -> Iterator[Chunk]:
    """``jobs`` in order, ``size`` at a time (the last chunk may be smaller),
    taken from the iterable only as chunks are asked for."""
    if size < 1:
        raise ValueError(f"a chunk size is at least 1, got {size}")
    iterator = iter(jobs)
    while batch := tuple(itertools.islice(iterator, size)):
        yield Chunk(jobs=batch)
