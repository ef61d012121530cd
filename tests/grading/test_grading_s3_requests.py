"""What grading a sweep on S3 costs on the wire, pinned: requests by method
for a fresh run, a kept run and a regraded run (issue 27's request economy).

The sweep lies in a bucket of moto's server and its grades go to another
prefix of it; a proxy in a process of its own (``tests/support/latencyproxy.py``,
no latency here) counts every request by method, a listing as ``LIST``.
A count that grows fails these tests: the figures are what docs/scale.md
says a run costs on object storage.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.latencyproxy import LatencyProxy
from tests.support.sweeps import make_sweep, run_flow
from truereward.grading import GradeRequest, chunk_size_for, grade_request
from truereward.util.io import REQUESTS_PER_RUN

RUNS = 24


@pytest.fixture
def counted(s3_endpoint: str) -> Iterator[LatencyProxy]:
    with LatencyProxy(s3_endpoint, 0.0) as proxy:
        yield proxy


def upload(client: Any, bucket: str, sweep: Path) -> None:
    for path in sorted(sweep.rglob("*")):
        if path.is_file():
            key = f"sweep/{path.relative_to(sweep)}"
            client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())


def request(bucket: str, proxy: LatencyProxy, **more: Any) -> dict[str, Any]:
    return {
        "sweep": f"s3://{bucket}/sweep",
        "target": f"s3://{bucket}/graded",
        "storage_options": {
            "endpoint_url": proxy.url,
            "client_kwargs": {"region_name": "us-east-1"},
        },
        "retry_delay_seconds": 0,
        **more,
    }


def listings(counts: dict[str, int]) -> int:
    return counts.pop("LIST", 0)


@pytest.fixture
def sweep(tmp_path: Path, s3_client: Any, bucket: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    local = make_sweep(tmp_path / "sweep", {f"r{index:02d}": "pass" for index in range(RUNS)})
    upload(s3_client, bucket, local)
    return bucket


@pytest.mark.slow
def test_a_fresh_a_kept_and_a_regraded_run_cost_what_docs_say(
    sweep: str, counted: LatencyProxy
) -> None:
    """The plain loop (``grade_request``): a fresh run is a GET of its
    task spec and of its evidence, and its four PUTs; a kept run the GET
    of its grade; a regraded run that GET, its two reads, the three
    DELETEs of the old grade's reward objects and view, the conditional
    replace and three PUTs. Listings: the sweep, the targets' one listing
    read a page at a time, and one listing per chunk to settle the
    chunk's sets (the budget, 64 runs, is one chunk here)."""
    bucket = sweep
    counted.reset()
    fresh = grade_request(GradeRequest.model_validate(request(bucket, counted)))
    assert fresh.published == {"created": RUNS}
    counts = counted.counts()
    assert listings(counts) <= 3
    assert counts == {"GET": 2 * RUNS, "PUT": 4 * RUNS}

    counted.reset()
    kept = grade_request(GradeRequest.model_validate(request(bucket, counted)))
    assert kept.published == {"unchanged": RUNS}
    counts = counted.counts()
    assert listings(counts) <= 2
    assert counts == {"GET": RUNS}

    counted.reset()
    regraded = grade_request(GradeRequest.model_validate(request(bucket, counted, regrade="all")))
    assert regraded.published == {"replaced": RUNS}
    counts = counted.counts()
    assert listings(counts) <= 3
    # The standing grade is read once, when the sweep is planned; it is
    # replaced naming its listed ETag.
    assert counts == {"GET": 3 * RUNS, "DELETE": 3 * RUNS, "PUT": 4 * RUNS}


@pytest.mark.slow
def test_the_flow_costs_the_same_a_run(
    sweep: str, counted: LatencyProxy, prefect_client_settings: str
) -> None:
    """grade-run on a real server: the same requests a run as the plain
    loop, one listing more per chunk at most (each chunk settles its sets),
    and one PUT of the sweep's HTML report."""
    bucket = sweep
    counted.reset()
    state = run_flow(**request(bucket, counted))
    assert state.is_completed(), state.message
    counts = counted.counts()
    chunks = -(-RUNS // chunk_size_for(RUNS, 8, io_budget=64))  # the default request's chunks
    assert listings(counts) <= 2 + chunks
    assert counts == {"GET": 2 * RUNS, "PUT": 4 * RUNS + 1}

    counted.reset()
    state = run_flow(**request(bucket, counted))
    assert state.is_completed(), state.message
    counts = counted.counts()
    assert listings(counts) <= 2
    assert counts == {"GET": RUNS, "PUT": 1}


def test_each_run_in_flight_has_its_requests_on_the_wire_at_once(
    sweep: str, s3_endpoint: str
) -> None:
    """An I/O budget of 8 runs is up to 24 requests at once: each run's
    two reads go together, and its three last writes. A client of
    botocore's 10 pooled connections queued the rest (the pool was sized
    to the budget, 10 when less), so each run waited its turn for a
    connection between its round trips."""
    bucket = sweep
    with LatencyProxy(s3_endpoint, 0.02) as proxy:  # so that requests overlap
        graded = grade_request(
            GradeRequest.model_validate(request(bucket, proxy, io_concurrency=8))
        )
        most = proxy.most_in_flight()
    assert graded.published == {"created": RUNS}
    assert 10 < most <= 8 * REQUESTS_PER_RUN, most


@pytest.mark.slow
def test_a_budget_of_one_is_one_run_on_the_wire_whatever_the_chunks_in_flight(
    sweep: str, s3_endpoint: str, prefect_client_settings: str
) -> None:
    """grade-run with an I/O budget of 1 and chunks of one run, 8 of them in
    flight: one run's requests at a time in the process (its reads
    together, its last writes together). A budget of 1 was each chunk's own
    plain loop, so 8 chunks put 8 runs on the wire, more than a budget of 2
    did."""
    bucket = sweep
    with LatencyProxy(s3_endpoint, 0.02) as proxy:  # so that requests overlap
        state = run_flow(**request(bucket, proxy, io_concurrency=1, chunk_size=1))
        most = proxy.most_in_flight()
    assert state.is_completed(), state.message
    assert 1 < most <= REQUESTS_PER_RUN, most
