"""Grading a sweep into S3 (moto's server on loopback): grades published as
objects, credentials from the environment (never in the request), and a
rerun that changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.sweeps import make_sweep
from truereward.grading import GradeRequest, grade_request


def objects(client: Any, bucket: str) -> dict[str, tuple[str, Any]]:
    listing = client.list_objects_v2(Bucket=bucket).get("Contents", [])
    return {item["Key"]: (item["ETag"], item["LastModified"]) for item in listing}


def test_a_sweep_graded_into_s3_and_graded_again(
    s3_endpoint: str, s3_client: Any, bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    sweep = make_sweep(tmp_path / "nightly", {"a": "pass", "b": "never", "c": "missing"})
    request = GradeRequest(
        sweep=str(sweep),
        target=f"s3://{bucket}/grades/nightly",
        storage_options={
            "endpoint_url": s3_endpoint,
            "client_kwargs": {"region_name": "us-east-1"},
        },
        max_attempts=2,
        retry_delay_seconds=0,
    )
    first = grade_request(request, sleep=lambda _: None)
    assert first.published == {"created": 3}
    stored = objects(s3_client, bucket)
    assert set(stored) == {
        "grades/nightly/a/grade.json",
        "grades/nightly/a/ctrf.json",
        "grades/nightly/a/reward.json",
        "grades/nightly/a/reward.txt",
        "grades/nightly/b/grade.json",
        "grades/nightly/b/ctrf.json",
        "grades/nightly/c/grade.json",
        "grades/nightly/c/ctrf.json",
    }
    body = s3_client.get_object(Bucket=bucket, Key="grades/nightly/a/reward.txt")["Body"].read()
    assert body == b"1.0\n"

    again = grade_request(request, sleep=lambda _: None)
    assert again.published == {"unchanged": 3} and again.already_graded == 3
    assert objects(s3_client, bucket) == stored

    s3_client.delete_object(Bucket=bucket, Key="grades/nightly/a/reward.txt")
    repaired = grade_request(request, sleep=lambda _: None)
    assert repaired.published == {"repaired": 1, "unchanged": 2}
    assert set(objects(s3_client, bucket)) == set(stored)
