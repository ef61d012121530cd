"""The index of many runs' targets under one S3 prefix
(:class:`truereward.publishing.index.TargetIndex`): each run's objects
found as the plan advances in listing order, across pages, the next page
listed while the current one is looked up (but not for a listing from a
given run, a chunk's, whose pages are sized for its runs); a run looked up
out of order listed alone."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.conftest import s3_options
from tests.support.latencyproxy import LatencyProxy
from truereward.publishing.index import TargetIndex, listing_order

RUNS = [f"run-{index:04d}" for index in range(1003)]  # two pages of 1,000 keys


@pytest.mark.slow
def test_runs_are_found_across_pages_and_the_next_page_is_listed_ahead(
    s3_endpoint: str, s3_client: Any, bucket: str
) -> None:
    for run in RUNS:
        s3_client.put_object(Bucket=bucket, Key=f"graded/{run}/grade.json", Body=b"{}")
    s3_client.put_object(Bucket=bucket, Key="graded/run-0001/reward.txt", Body=b"1\n")
    s3_client.put_object(Bucket=bucket, Key="graded/run-0001/notes.md", Body=b"not ours")
    with LatencyProxy(s3_endpoint, 0.02) as proxy:
        index = TargetIndex.open(f"s3://{bucket}/graded", s3_options(proxy.url))
        assert index is not None
        proxy.reset()
        first = index.lookup(RUNS[0])
        assert first is not None and set(first.objects) == {"grade.json"}
        # The second page is asked for while the first is looked up, not when
        # the plan reaches its first run (a round trip's stall at each page).
        deadline = time.monotonic() + 10
        while proxy.counts().get("LIST", 0) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proxy.counts() == {"LIST": 2}
        found = {run: index.lookup(run) for run in sorted(RUNS[1:], key=listing_order)}
        assert proxy.counts() == {"LIST": 2}  # every run from the two pages
        # Out of the listing's order: that run's prefix is listed alone.
        again = index.lookup(RUNS[5])
        assert proxy.counts() == {"LIST": 3}
        # A listing from a given run (a chunk's, settling its publishes) reads
        # no page ahead: its runs are mostly in the first page (of two here).
        chunk = TargetIndex.open(f"s3://{bucket}/graded", s3_options(proxy.url), start=RUNS[1])
        assert chunk is not None
        proxy.reset()
        assert all(chunk.lookup(run) is not None for run in RUNS[1:9])
        time.sleep(0.5)  # time enough for a page read ahead to reach the proxy
        assert proxy.counts() == {"LIST": 1}
        # Sized for the runs it settles (here 2: a page of 18 keys, where
        # run-0001 has three and every other run one): a page of 1,000 would
        # cost parsing keys nobody looks at. Runs past the page are on the
        # next one, found the same.
        sized = TargetIndex.open(
            f"s3://{bucket}/graded", s3_options(proxy.url), start=RUNS[1], runs=2
        )
        assert sized is not None
        proxy.reset()
        assert set(sized.lookup(RUNS[1]).objects) == {"grade.json", "reward.txt"}  # type: ignore[union-attr]
        assert set(sized.lookup(RUNS[2]).objects) == {"grade.json"}  # type: ignore[union-attr]
        assert proxy.counts() == {"LIST": 1}
        past = [sized.lookup(run) for run in RUNS[3:31]]
        assert proxy.counts() == {"LIST": 2}
        assert all(item is not None and set(item.objects) == {"grade.json"} for item in past)
        # Targets inside the runs lie among the runs' own files, however
        # many: their pages stay whole.
        inside = TargetIndex.open(
            f"s3://{bucket}/graded", s3_options(proxy.url), "logs/verifier", RUNS[1], runs=2
        )
        assert inside is not None
        proxy.reset()
        assert all(inside.lookup(run) is not None for run in RUNS[1:31])
        assert proxy.counts() == {"LIST": 1}
    assert all(standing is not None for standing in found.values())
    assert set(found["run-0001"].objects) == {"grade.json", "reward.txt"}  # type: ignore[union-attr]
    assert set(found[RUNS[-1]].objects) == {"grade.json"}  # type: ignore[union-attr]
    assert again is not None and set(again.objects) == {"grade.json"}
