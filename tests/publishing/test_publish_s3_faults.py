"""Publishing to S3 through a fault-injecting proxy: every fault at every
request of a publish either lets it complete consistently or ends in a typed
error, and publishing again always ends consistent. No multipart upload is
ever left behind."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.conftest import s3_options
from tests.support.faultproxy import FAULTS, FaultProxy
from tests.support.s3_published import assert_consistent, body, gradable, listing, ungradable
from truereward import PublishError, publish
from truereward.util.strictjson import loads

#: The publisher's read timeout: an answer the proxy holds back (``slow``)
#: comes four times as late, so it always trips it, and nothing waits for
#: that answer (the proxy has it from the server before it waits).
READ_TIMEOUT = 2.0


@pytest.fixture(scope="module")
def proxy(s3_endpoint: str) -> Iterator[FaultProxy]:
    parsed = urlparse(s3_endpoint)
    assert parsed.hostname is not None and parsed.port is not None
    running = FaultProxy(upstream=(parsed.hostname, parsed.port), delay=4 * READ_TIMEOUT)
    yield running
    running.close()


def proxied_options(proxy: FaultProxy) -> dict[str, Any]:
    return s3_options(
        proxy.endpoint,
        connect_timeout=1.0,
        read_timeout=READ_TIMEOUT,
        retries={"max_attempts": 3, "mode": "standard"},
    )


def at_once(
    proxy: FaultProxy, fault: str, prefixes: dict[int, str], run: Callable[[int], object]
) -> dict[int, PublishError | None]:
    """``run(position)`` for every position at once, each publishing at its
    own prefix, the one at position n given ``fault`` at its n-th request
    (counted at its prefix, as :meth:`FaultProxy.reset` counts them for a
    publish alone): the waits of the faults (timeouts, retries) overlap.
    Returns each position's PublishError, or None; any other error is raised."""
    counts: Counter[int] = Counter()
    unclaimed: list[str] = []  # requests of no position: none is expected
    lock = threading.Lock()

    def whose(path: str) -> int | None:
        """The position a request is from, by the prefix in its path (a key,
        or a listing's ``prefix=`` query)."""
        return next(
            (n for n, p in prefixes.items() if f"/{p}/" in path or f"={p}%2F" in path), None
        )

    def judge(number: int, method: str, path: str) -> str | None:
        position = whose(path)
        with lock:
            if position is None:
                unclaimed.append(f"{method} {path}")
                return None
            counts[position] += 1
            return fault if counts[position] == position else None

    def outcome(position: int) -> PublishError | None:
        try:
            run(position)
        except PublishError as error:
            return error
        return None

    proxy.reset()
    proxy.judge = judge
    try:
        with ThreadPoolExecutor(len(prefixes)) as pool:
            futures = {position: pool.submit(outcome, position) for position in prefixes}
            outcomes = {position: future.result() for position, future in futures.items()}
    finally:
        proxy.judge = None
    # A request of no position was passed on unjudged: that would be a miscount.
    assert unclaimed == [], unclaimed
    return outcomes


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
    prefixes = {position: f"fresh-{fault}-{position}" for position in range(1, 7)}
    documents = {position: gradable(row, tag=prefix) for position, prefix in prefixes.items()}

    def faulted(position: int) -> None:
        url = f"s3://{bucket}/{prefixes[position]}"
        publish(documents[position], url, storage_options=options)

    failures = at_once(proxy, fault, prefixes, faulted)
    for position, prefix in prefixes.items():
        document = documents[position]
        if failures[position] is not None:
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
    prefixes = {position: f"replace-{fault}-{position}" for position in range(1, 10)}
    firsts = {position: gradable(row, tag=prefix) for position, prefix in prefixes.items()}
    second = ungradable(row)
    proxy.reset()
    for position, prefix in prefixes.items():
        publish(firsts[position], f"s3://{bucket}/{prefix}", storage_options=options)

    def faulted(position: int) -> None:
        url = f"s3://{bucket}/{prefixes[position]}"
        publish(second, url, storage_options=options, replaces=firsts[position].digest)

    failures = at_once(proxy, fault, prefixes, faulted)
    for position, prefix in prefixes.items():
        url, first = f"s3://{bucket}/{prefix}", firsts[position]
        if failures[position] is not None:
            assert_never_inconsistent(s3_client, bucket, prefix)
        proxy.reset()
        publish(second, url, storage_options=options, replaces=first.digest)
        assert body(s3_client, bucket, f"{prefix}/grade.json") == second.to_bytes()
        assert_consistent(s3_client, bucket, prefix)
    assert_no_multipart_uploads(s3_client, bucket)


@pytest.mark.slow
def test_the_proxy_really_injects_faults(row, proxy, bucket):
    options = proxied_options(proxy)
    options["config_kwargs"]["retries"] = {"total_max_attempts": 1}  # one attempt: no retry
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
