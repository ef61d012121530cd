"""A superseded publisher's late write on S3, found and repaired.

Publisher A's PUT of ``reward.txt`` is held by a proxy (its client gives up
on it and A stops, as a process that dies would); publisher B replaces A's
grade meanwhile; then the proxy sends A's PUT, which the store applies after
B's grade was published. ``truereward verify`` finds the stray object (by
its place beside a refusal, or by its metadata when its bytes are the new
grade's too), and ``truereward verify --repair`` over the sweep, or a
republish, repairs it from the ``grade.json`` that stands."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.conftest import s3_options
from tests.support.faultproxy import FaultProxy
from truereward import GradeDocument, PublishError, grade_document, publish
from truereward.util.target import Target
from truereward.verify import verify_target

FIX = {"id": "tests/test_app.py::test_fix", "kind": "fail_to_pass"}


@pytest.fixture
def proxy(s3_endpoint: str) -> Iterator[FaultProxy]:
    parsed = urlparse(s3_endpoint)
    assert parsed.hostname is not None and parsed.port is not None
    running = FaultProxy(upstream=(parsed.hostname, parsed.port))
    yield running
    running.close()


def grade(verdict: str, attempt: int = 1) -> GradeDocument:
    row = {**FIX, "verdict": verdict}
    if verdict == "ungradable":
        row["code"] = "EVIDENCE_UNREADABLE"
    return grade_document([row], run={"id": "run-1", "attempt": attempt})


def verify_cli(*args: str, env_endpoint: str) -> subprocess.CompletedProcess[str]:
    options = s3_options(env_endpoint)
    flags = [
        f"--storage-option=endpoint_url={options['endpoint_url']}",
        "--storage-option=key=testing",
        "--storage-option=secret=testing",
        '--storage-option=client_kwargs={"region_name": "us-east-1"}',
    ]
    return subprocess.run(
        [sys.executable, "-m", "truereward", "verify", *args, *flags],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def land_late(proxy: FaultProxy, url: str, first: GradeDocument, newer: GradeDocument,
              direct: dict[str, Any]) -> None:  # fmt: skip
    """A publishes ``first`` through the proxy and its reward.txt PUT is held
    (A gives up); B replaces it with ``newer`` directly; then A's PUT lands."""
    slow = s3_options(proxy.endpoint, retries={"max_attempts": 1}, read_timeout=2)
    proxy.hold("reward.txt")
    failed: list[BaseException] = []

    def publisher_a() -> None:
        try:
            publish(first, url, storage_options=slow)
        except PublishError as error:
            failed.append(error)

    thread = threading.Thread(target=publisher_a)
    thread.start()
    thread.join(timeout=60)
    assert failed, "publisher A was to give up on its held PUT"
    assert proxy.held, "the proxy held nothing"
    publish(newer, url, storage_options=direct, replaces=first.digest)
    proxy.hold(None)
    assert proxy.release() >= 1  # A's reward.txt lands now, after B's grade


@pytest.mark.slow
def test_a_late_reward_beside_a_refusal_is_found_and_repaired(
    proxy: FaultProxy, s3_endpoint: str, s3_client: Any, bucket: str
) -> None:
    url = f"s3://{bucket}/sweep/run-1"
    direct = s3_options(s3_endpoint)
    first, newer = grade("pass"), grade("ungradable", attempt=2)
    land_late(proxy, url, first, newer, direct)
    target = Target(url=url, storage_options=direct)
    document, found = verify_target(target)
    assert document.digest == newer.digest
    assert {item.where for item in found} >= {"reward.txt"}  # beside a refusal
    named = {item.where: item.stored for item in found}
    assert first.digest in str(named["reward.txt"]) or named["reward.txt"] == "present"

    ran = verify_cli(f"s3://{bucket}/sweep", env_endpoint=s3_endpoint)
    assert ran.returncode == 1 and "run-1: reward.txt" in ran.stdout, ran.stdout + ran.stderr
    repaired = verify_cli("--repair", f"s3://{bucket}/sweep", env_endpoint=s3_endpoint)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert "repaired: removed reward.txt" in repaired.stdout
    assert verify_target(target)[1] == []
    keys = {item["Key"] for item in s3_client.list_objects_v2(Bucket=bucket)["Contents"]}
    assert keys == {"sweep/run-1/grade.json", "sweep/run-1/ctrf.json"}


@pytest.mark.slow
def test_a_late_reward_of_the_same_value_is_found_by_its_metadata(
    proxy: FaultProxy, s3_endpoint: str, s3_client: Any, bucket: str
) -> None:
    """Both grades say 1.0: the late reward.txt has the newer grade's bytes,
    and only its metadata tells it belongs to the superseded one."""
    url = f"s3://{bucket}/sweep/run-1"
    direct = s3_options(s3_endpoint)
    first, newer = grade("pass"), grade("pass", attempt=2)
    land_late(proxy, url, first, newer, direct)
    stray = s3_client.head_object(Bucket=bucket, Key="sweep/run-1/reward.txt")
    assert stray["Metadata"] == {"truereward-grade": first.digest}
    target = Target(url=url, storage_options=direct)
    _, found = verify_target(target)
    assert [(item.where, item.stored) for item in found] == [
        ("reward.txt", f"metadata names grade {first.digest}")
    ]
    # The grade-run flow republishes a kept grade: that repairs it too.
    result = publish(newer, url, storage_options=direct)
    assert result.written == ("reward.txt",)
    head = s3_client.head_object(Bucket=bucket, Key="sweep/run-1/reward.txt")
    assert head["Metadata"] == {"truereward-grade": newer.digest}
    assert verify_target(target)[1] == []
    ran = verify_cli("--json", url, env_endpoint=s3_endpoint)
    assert ran.returncode == 0 and json.loads(ran.stdout)["consistent"] is True
