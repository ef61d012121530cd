"""Splitting a sweep into shards: the unit one ``grade-run`` flow run grades.

A sweep listed once is split by run id into ``shards`` parts, each graded
by one ``grade-run`` flow run as a list of runs naming its sweep
(``sweep_name``), so every document says what it would have said graded
whole. :func:`shard_of` is stable (the first eight bytes of the run id's
sha256, modulo the count), so a shard is the unit of restart;
:func:`shard_requests` makes each shard's request and :func:`launch_order`
the order they start in; :class:`SweepRequest` is the ``grade-sweep``
flow's. docs/scale.md, "On several process workers".
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Annotated

from pydantic import ConfigDict, Field

from .plan import RunJob
from .request import GradeRequest

__all__ = [
    "SHARDING_FIELDS",
    "SweepRequest",
    "launch_order",
    "shard_of",
    "shard_requests",
    "split",
]


class SweepRequest(GradeRequest):
    """What to grade (every field of :class:`GradeRequest`) and how to shard
    it over ``grade-run`` flow runs.

    - ``shards``: how many parts the sweep is split into (by run id, stably);
    - ``shards_in_flight``: at most this many shards' flow runs at once
      (default: all);
    - ``deployment``: the ``grade-run`` deployment each shard runs on (its
      work pool's workers, on any machine, pick the shards up);
    - ``only_shards``: grade these shards only (how a failed shard is graded
      again; the others are left as they are).
    """

    shards: Annotated[int, Field(ge=1, le=1024)] = 4
    shards_in_flight: Annotated[int, Field(ge=1, le=1024)] | None = None
    deployment: str = Field(default="grade-run/local", min_length=3, pattern=r"^grade-run/[^/]+$")
    only_shards: list[Annotated[int, Field(ge=0)]] | None = None

    model_config = ConfigDict(title="SweepRequest")


#: The fields of :class:`SweepRequest` a shard's own request does not take.
SHARDING_FIELDS = frozenset({"shards", "shards_in_flight", "deployment", "only_shards"})


def shard_of(run: str, shards: int) -> int:
    """The shard (from 0) of run id ``run`` among ``shards``."""
    if shards < 1:
        raise ValueError(f"a sweep has at least one shard, got {shards}")
    return int.from_bytes(hashlib.sha256(run.encode("utf-8")).digest()[:8], "big") % shards


def split(jobs: Sequence[RunJob], shards: int) -> list[list[RunJob]]:
    """``jobs`` in ``shards`` lists, each in the jobs' order."""
    parts: list[list[RunJob]] = [[] for _ in range(shards)]
    for job in jobs:
        parts[shard_of(job.run, shards)].append(job)
    return parts


def launch_order(sizes: Mapping[int, int]) -> list[int]:
    """The shard indexes of ``sizes`` (runs by shard) largest first, ties by
    index: the order a parent starts its shards in. Workers take the flow
    runs in the order they were created, so the shards that take longest
    start first and the small ones fill in at the end (longest processing
    time first); in index order two workers could end a shard apart.
    """
    return sorted(sizes, key=lambda index: (-sizes[index], index))


def shard_requests(
    request: GradeRequest, jobs: Sequence[RunJob], shards: int
) -> dict[int, GradeRequest]:
    """The ``grade-run`` request of each shard of ``jobs`` that has runs, by
    shard index: ``request`` as it is, but given as the shard's ``runs``,
    naming the sweep (``sweep_name``) so documents say what they would say
    had the sweep been graded whole."""
    fields = request.model_dump(mode="json", exclude_defaults=True, exclude=set(SHARDING_FIELDS))
    fields.pop("sweep", None)
    if request.sweep_label is not None:
        fields["sweep_name"] = request.sweep_label
    return {
        index: GradeRequest.model_validate({**fields, "runs": [job.url for job in part]})
        for index, part in enumerate(split(jobs, shards))
        if part
    }
