"""Publishing to S3 through a fault-injecting proxy: every fault at every
request of a publish either lets it complete consistently or ends in a typed
error, and publishing again always ends consistent. No multipart upload is
ever left behind."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.conftest import s3_options
from tests.support.faultproxy import FAULTS, FaultProxy
from tests.support.s3_published import assert_consistent, body, gradable, listing, ungradable
from truereward import PublishError, publish
from truereward.util.strictjson import loads


@pytest.fixture(scope="module")
def proxy(s3_endpoint: str) -> Iterator[FaultProxy]:
    parsed = urlparse(s3_endpoint)
    assert parsed.hostname is not None and parsed.port is not None
    running = FaultProxy(upstream=(parsed.hostname, parsed.port), delay=1.5)
    yield running
    running.close()


def proxied_options(proxy: FaultProxy) -> dict[str, Any]:
    return s3_options(
        proxy.endpoint,
        connect_timeout=1.0,
        read_timeout=1.0,
        retries={"max_attempts": 3, "mode": "standard"},
    )


def assert_never_inconsistent(client: Any, bucket: str, prefix: str) -> None:
    """Whatever a failed publish left: no reward object beside a grade that
    does not have that reward."""
    names = set(listing(client, bucket, prefix))
    grade = loads(body(client, bucket, f"{prefix}/grade.json")) if "grade.json" in names else None
    if "reward.txt" in names:
        assert grade is not None and grade["gradable"]
        assert float(body(client, bucket, f"{prefix}/reward.txt")) == grade["reward"]
    if "reward.json" in names:
        assert grade is not None and grade["gradable"]
        assert loads(body(client, bucket, f"{prefix}/reward.json"))["reward"] == grade["reward"]


def assert_no_multipart_uploads(client: Any, bucket: str) -> None:
    assert not client.list_multipart_uploads(Bucket=bucket).get("Uploads")


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS)
def test_a_fault_at_any_request_of_a_fresh_publish(row, proxy, s3_client, bucket, fault):
    options = proxied_options(proxy)
    for position in range(1, 7):
        prefix = f"fresh-{fault}-{position}"
        document = gradable(row, tag=prefix)
        proxy.reset({position: fault})
        try:
            publish(document, f"s3://{bucket}/{prefix}", storage_options=options)
        except PublishError:
            assert_never_inconsistent(s3_client, bucket, prefix)
        else:
            assert_consistent(s3_client, bucket, prefix)
        proxy.reset()
        publish(document, f"s3://{bucket}/{prefix}", storage_options=options)
        assert body(s3_client, bucket, f"{prefix}/grade.json") == document.to_bytes()
        assert_consistent(s3_client, bucket, prefix)
    assert_no_multipart_uploads(s3_client, bucket)


@pytest.mark.slow
@pytest.mark.parametrize("fault", FAULTS)
def test_a_fault_at_any_request_of_a_replace(row, proxy, s3_client, bucket, fault):
    options = proxied_options(proxy)
    for position in range(1, 10):
        prefix = f"replace-{fault}-{position}"
        url = f"s3://{bucket}/{prefix}"
        first, second = gradable(row, tag=prefix), ungradable(row)
        proxy.reset()
        publish(first, url, storage_options=options)
        proxy.reset({position: fault})
        try:
            publish(second, url, storage_options=options, replaces=first.digest)
        except PublishError:
            assert_never_inconsistent(s3_client, bucket, prefix)
        proxy.reset()
        publish(second, url, storage_options=options, replaces=first.digest)
        assert body(s3_client, bucket, f"{prefix}/grade.json") == second.to_bytes()
        assert_consistent(s3_client, bucket, prefix)
    assert_no_multipart_uploads(s3_client, bucket)


@pytest.mark.slow
def test_the_proxy_really_injects_faults(row, proxy, bucket):
    options = proxied_options(proxy)
    options["config_kwargs"]["retries"] = {"max_attempts": 1}
    proxy.reset(dict.fromkeys(range(1, 20), "503"))
    with pytest.raises(PublishError):
        publish(gradable(row), f"s3://{bucket}/always-503", storage_options=options)
    assert proxy.injected, "no fault was injected"


def test_request_counts_of_fresh_republish_and_ungradable(row, proxy, s3_client, bucket):
    options = proxied_options(proxy)
    for name, data in [("reward.txt", b"1.0\n"), ("reward.json", b'{"reward": 1.0}')]:
        s3_client.put_object(Bucket=bucket, Key=f"count/orphans/{name}", Body=data)
    counts = {}
    for label, grade, prefix, listed in [
        ("fresh", gradable(row), "count/run", None),
        ("republish", gradable(row), "count/run", None),
        ("fresh, listed", gradable(row, tag="listed"), "count/listed", {}),
        ("republish, listed", gradable(row, tag="listed"), "count/listed", "list"),
        ("ungradable", ungradable(row), "count/refused", None),
        ("over orphans", gradable(row, reward=0.0), "count/orphans", None),
    ]:
        if listed == "list":  # as a sweep's planning hands it over
            listed = {name: tag for name, (tag, _) in listing(s3_client, bucket, prefix).items()}
        proxy.reset()
        publish(grade, f"s3://{bucket}/{prefix}", storage_options=options, listing=listed)
        counts[label] = dict(proxy.methods)
        assert_consistent(s3_client, bucket, prefix)
    # A fresh run: the listing (a GET) that shows what must go before its
    # grade.json, four PUTs, and the settling HEAD (is ours still the
    # grade?); handed the listing, one request less. A republish: the
    # listing and a HEAD of each reward object (does its metadata name this
    # grade?); handed a listing that shows its set complete, nothing (a pass
    # over a sweep checks sets by their ETags). Reward objects left without
    # a grade: one DELETE each, before the grade.
    assert counts == {
        "fresh": {"GET": 1, "PUT": 4, "HEAD": 1},
        "republish": {"GET": 1, "HEAD": 2},
        "fresh, listed": {"PUT": 4, "HEAD": 1},
        "republish, listed": {},
        "ungradable": {"GET": 1, "PUT": 2, "HEAD": 1},
        "over orphans": {"GET": 1, "DELETE": 2, "PUT": 4, "HEAD": 1},
    }


def test_a_gradable_grade_deletes_reward_objects_left_without_a_grade_first(
    row, s3_endpoint, s3_client, bucket
):
    for name, data in [("reward.txt", b"0.0\n"), ("reward.json", b'{"reward": 0.0}')]:
        s3_client.put_object(Bucket=bucket, Key=f"planted/{name}", Body=data)
    result = publish(
        gradable(row), f"s3://{bucket}/planted", storage_options=s3_options(s3_endpoint)
    )
    assert result.removed == ("reward.txt", "reward.json")
    assert assert_consistent(s3_client, bucket, "planted")["reward"] == 1.0
