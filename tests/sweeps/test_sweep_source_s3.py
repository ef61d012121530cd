"""A sweep on S3 is listed a page at a time, keeping names only: its runs
(the key prefixes one level down), dot-named prefixes skipped with why,
plain objects beside the runs ignored, a missing prefix refused; and
nothing of the listing stays cached in the filesystem. Its grades are read
back many at once, in name order."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import s3_options
from tests.support.latencyproxy import LatencyProxy
from truereward.sweeps.source import SweepNotFound, SweepSource


def put(client: Any, bucket: str, keys: list[str]) -> None:
    for key in keys:
        client.put_object(Bucket=bucket, Key=key, Body=b"{}")


@pytest.mark.slow
def test_runs_past_the_first_page_are_listed_once_and_nothing_is_cached(
    s3_endpoint: str, s3_client: Any, bucket: str
) -> None:
    runs = [f"run-{index:04d}" for index in range(1003)]  # more than one page of 1,000
    put(s3_client, bucket, [f"sweep/{run}/grade.json" for run in runs])
    put(s3_client, bucket, ["sweep/.hidden/grade.json", "sweep/README.md", "other/x/grade.json"])
    source = SweepSource(f"s3://{bucket}/sweep", s3_options(s3_endpoint))
    names, skipped = source.scan()
    assert names == runs
    assert skipped == [(".hidden", "its name starts with '.'")]
    assert not source._fs.dircache  # no listing kept for the flow's life


def test_a_sweep_with_no_runs_is_empty_and_a_missing_one_refused(
    s3_endpoint: str, s3_client: Any, bucket: str
) -> None:
    put(s3_client, bucket, ["only-files/README.md"])
    options = s3_options(s3_endpoint)
    assert SweepSource(f"s3://{bucket}/only-files", options).scan() == ([], [])
    with pytest.raises(SweepNotFound, match="no such sweep"):
        SweepSource(f"s3://{bucket}/absent", options).scan()
    with pytest.raises(SweepNotFound, match="cannot list"):
        SweepSource(f"s3://{bucket}-missing/sweep", options).scan()


def test_grades_are_read_back_many_at_once_and_come_in_name_order(
    s3_endpoint: str, s3_client: Any, bucket: str
) -> None:
    # Each grade is a round trip: grade-sweep's summary read 1,000 of them one
    # after another (docs/scale.md). Bodies that are no grade: each record
    # says so, under its run's name.
    runs = [f"run-{index:03d}" for index in range(120)]
    put(s3_client, bucket, [f"sweep/{run}/grade.json" for run in runs])
    with LatencyProxy(s3_endpoint, 0.02) as proxy:
        source = SweepSource(f"s3://{bucket}/sweep", s3_options(proxy.url))
        proxy.reset()
        records = list(source.records())
        most = proxy.most_in_flight()
    assert [record.run for record in records] == runs
    assert all(record.problem is not None for record in records)
    # More than botocore's 10 pooled connections: the source's client keeps
    # as many as it reads at once (with 10, the reads queued for the pool).
    assert most > 10, most


def test_read_back_on_s3_finds_grades_in_place_and_names_what_it_cannot_read(
    s3_endpoint: str, s3_client: Any, bucket: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The GETs sent ahead on s3fs's loop answer as the one-at-a-time reads
    # did: a grade in the run's own logs/verifier is found there, a missing
    # grade and one over the size bound are unreadable, each saying why.
    from tests.support.graded_sweeps import document_for
    from truereward.sweeps import source as source_module

    def grade(run: str) -> bytes:
        return document_for(run, "pass").to_bytes()

    s3_client.put_object(Bucket=bucket, Key="sweep/a/grade.json", Body=grade("a"))
    s3_client.put_object(Bucket=bucket, Key="sweep/b/logs/verifier/grade.json", Body=grade("b"))
    s3_client.put_object(Bucket=bucket, Key="sweep/c/rows.jsonl", Body=b"")
    s3_client.put_object(Bucket=bucket, Key="sweep/d/grade.json", Body=grade("d") + b" " * 64)
    monkeypatch.setattr(source_module, "MAX_GRADE_BYTES", len(grade("d")) + 8)
    source = SweepSource(f"s3://{bucket}/sweep", s3_options(s3_endpoint))
    records = {record.run: record for record in source.records()}
    assert sorted(records) == ["a", "b", "c", "d"]
    assert records["a"].problem is None and records["b"].problem is None
    assert source.in_place
    assert records["c"].problem == "no grade.json"
    assert "larger than" in str(records["d"].problem), records["d"].problem
