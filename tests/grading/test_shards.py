"""Splitting a sweep into shards (truereward.grading.shards): every run in
exactly one shard, the same shard for the same run id and shard count
whatever else the sweep holds, and a shard's request that grades what the
whole sweep's would (same sweep name, same settings, its runs only)."""

from __future__ import annotations

import hashlib
import itertools
import json
import shlex
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.sweeps import make_sweep
from truereward.grading import GradeRequest
from truereward.grading.plan import GradeSettings, RunJob, plan_sweep
from truereward.grading.shards import (
    SweepRequest,
    launch_order,
    shard_of,
    shard_requests,
    split,
)

run_ids = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40
)  # any text: shard_of hashes it
shard_counts = st.integers(min_value=1, max_value=1024)

SETTINGS = GradeSettings(scheme="gated-binary/1", case_set="tests/task.json")


def job(run: str) -> RunJob:
    return RunJob(run=run, url=f"/sweeps/nightly/{run}", settings=SETTINGS)


@pytest.mark.slow
@given(run_ids, shard_counts)
def test_a_run_lands_in_one_shard_in_range_by_its_id_alone(run: str, shards: int) -> None:
    index = shard_of(run, shards)
    assert 0 <= index < shards
    # The rule itself: the first eight bytes of the id's sha256, big-endian,
    # modulo the count (documented, so another tool can compute it too).
    digest = hashlib.sha256(run.encode("utf-8")).digest()
    assert index == int.from_bytes(digest[:8], "big") % shards


@pytest.mark.slow
@given(st.lists(run_ids, unique=True, max_size=60), st.lists(run_ids, max_size=20), shard_counts)
def test_split_is_a_partition_that_other_runs_do_not_move(
    runs: list[str], others: list[str], shards: int
) -> None:
    parts = split([job(run) for run in runs], shards)
    assert len(parts) == shards
    assert sorted(item.run for part in parts for item in part) == sorted(runs)  # each once
    for index, part in enumerate(parts):
        assert [item.run for item in part] == [
            run for run in runs if shard_of(run, shards) == index
        ]
    # A sweep that grew (or shrank) keeps every run where it was.
    grown = [*runs, *(run for run in others if run not in runs)]
    again = split([job(run) for run in grown], shards)
    for index, part in enumerate(parts):
        kept = {item.run for item in again[index]}
        assert {item.run for item in part} <= kept


@given(st.dictionaries(st.integers(0, 1023), st.integers(0, 10_000), max_size=40))
def test_shards_launch_largest_first_ties_by_index(sizes: dict[int, int]) -> None:
    order = launch_order(sizes)
    assert sorted(order) == sorted(sizes)  # each shard once
    for first, then in itertools.pairwise(order):
        assert sizes[first] > sizes[then] or (sizes[first] == sizes[then] and first < then)


def test_largest_first_ends_two_workers_closer_together() -> None:
    # The benchmark's 2,000 runs in 4 shards (docs/scale.md): in index order
    # the worker that takes shards 1 and 3 ends 68 runs after the other;
    # largest first, 50 (and no order does better).
    sizes = {0: 451, 1: 524, 2: 515, 3: 510}
    assert launch_order(sizes) == [1, 2, 3, 0]

    def last_end(order: list[int]) -> int:
        workers = [0, 0]  # each takes the next shard when it is free
        for index in order:
            workers[workers.index(min(workers))] += sizes[index]
        return max(workers)

    assert last_end(list(sizes)) == 1034 and last_end(launch_order(sizes)) == 1025


def test_shard_of_refuses_zero_shards() -> None:
    with pytest.raises(ValueError, match="at least one shard"):
        shard_of("run-1", 0)


def test_shard_requests_grade_what_the_whole_sweep_request_would(tmp_path: Path) -> None:
    runs = {f"run-{index:03d}": "pass" for index in range(40)}
    sweep = make_sweep(tmp_path / "nightly", runs)
    request = SweepRequest(
        sweep=str(sweep), target=str(tmp_path / "out"), shards=3, only_shards=[1],
        concurrency=2, max_attempts=2,
    )  # fmt: skip
    jobs, skipped = plan_sweep(request, None)
    assert not skipped
    shards = shard_requests(request, jobs, request.shards)
    assert set(shards) <= {0, 1, 2}
    given_runs = [url for shard in shards.values() for url in shard.runs or ()]
    assert sorted(given_runs) == sorted(item.url for item in jobs)  # every run, once
    whole = GradeRequest.model_validate(
        request.model_dump(exclude={"shards", "shards_in_flight", "deployment", "only_shards"})
    )
    for index, shard in shards.items():
        assert shard.sweep is None and shard.sweep_label == "nightly" == whole.sweep_label
        assert {url.rsplit("/", 1)[-1] for url in shard.runs or ()} == {
            run for run in runs if shard_of(run, 3) == index
        }
        # Everything but where the runs come from is the whole request's.
        assert shard.model_dump(exclude={"sweep", "runs", "sweep_name"}) == whole.model_dump(
            exclude={"sweep", "runs", "sweep_name"}
        )


def test_the_command_that_grades_a_failed_shard_again_asks_for_that_shard_alone() -> None:
    # What the parent's artifact prints for a shard that did not complete
    # (checked by hand against a server: it graded that shard's missing runs
    # and nothing else).
    from flows.grade_sweep import _again

    request = SweepRequest(sweep="sweeps/nightly", target="out/nightly", shards=8, concurrency=2)
    words = shlex.split(_again(request, 5))
    assert words[:4] == ["prefect", "deployment", "run", "grade-sweep/local"]
    assert words[-1] == "--watch" and words[4] == "-p"
    key, _, value = words[5].partition("=")
    again = SweepRequest.model_validate(json.loads(value))
    assert key == "request" and again.only_shards == [5]
    assert again.model_dump(exclude={"only_shards"}) == request.model_dump(exclude={"only_shards"})
