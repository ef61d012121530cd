"""No reward beside a grade it does not belong to, on S3, at any moment.

Reward objects (and a CTRF view) that a new grade does not own, whether an
older grade's or left with no grade at all by another writer, are deleted
before its ``grade.json`` is written. Shown here through the fault proxy
(``tests/support/faultproxy.py``), whose judge looks at the bucket before every
request a publisher sends (the publisher waits there, so every state its
requests leave the bucket in is seen):

- a publishing process killed with ``kill -9`` at every request, the request
  then dropped or applied (its answer lost), in each scenario below;
- a persistent ``503 SlowDown`` on each write in turn;

and after each kill or failure, before any repair, no reward object, and no
CTRF view, stands beside a ``grade.json`` of another digest; then ``truereward
verify --repair`` (where a grade stands) and a republish complete the set.
"""

from __future__ import annotations

import hashlib
import importlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlparse

import pytest

from tests.conftest import s3_options
from tests.support.faultproxy import FaultProxy
from tests.support.s3_published import (
    assert_consistent,
    body,
    gradable,
    listing,
    publish_at,
    ungradable,
)
from truereward import GradeDocument, PublishError, publish
from truereward.grade.files import REWARD_FILES
from truereward.publishing import PublishDecision, Target
from truereward.verify import RewardWithoutGrade, repair_target, verify_target

#: What another writer left at the run's prefix, with no grade.json: a
#: reward of 1.0 and a CTRF view of no grade of ours.
PLANTED = {
    "reward.txt": b"1.0\n",
    "reward.json": b'{"reward": 1.0}',
    "ctrf.json": b'{"reportFormat": "CTRF"}',
}

#: Modules the zygote imports once, so a killed publisher costs a fork.
PRELOAD = ["truereward.publishing.s3", "s3fs", "tests.publishing.test_publish_s3_orphans"]


@pytest.fixture
def proxy(s3_endpoint: str) -> Iterator[FaultProxy]:
    parsed = urlparse(s3_endpoint)
    assert parsed.hostname is not None and parsed.port is not None
    running = FaultProxy(upstream=(parsed.hostname, parsed.port))
    yield running
    running.close()


def through(proxy: FaultProxy) -> dict[str, Any]:
    """Options for a publisher behind the proxy: no retry of botocore's own
    (s3fs still retries a SlowDown). Its ``max_attempts`` counts retries, not
    attempts: one attempt is ``total_max_attempts``."""
    return s3_options(proxy.endpoint, retries={"total_max_attempts": 1}, read_timeout=5)


def strangers(client: Any, bucket: str, prefix: str) -> list[str]:
    """What stands beside the ``grade.json`` at ``prefix`` that is not its
    own: a reward object or CTRF view whose metadata names another grade (or
    none), a reward beside a refusal or saying another value. Empty when no
    grade stands (reward objects alone are verify's to flag)."""
    try:
        raw = body(client, bucket, f"{prefix}/grade.json")
    except client.exceptions.NoSuchKey:
        return []
    digest = hashlib.sha256(raw).hexdigest()
    document = GradeDocument.from_bytes(raw)
    found, names = [], set()
    for name in (*REWARD_FILES, document.publication.ctrf):
        head = metadata(client, bucket, f"{prefix}/{name}")  # by name: no listing page to miss
        if head is None:
            continue
        names.add(name)
        named = head.get("truereward-grade")
        if named != digest:
            found.append(f"{name} of grade {named} beside grade {digest[:12]}")
        elif name in REWARD_FILES and not document.gradable:
            found.append(f"{name} beside a refusal")
    if "reward.txt" in names and document.gradable:
        value = float(body(client, bucket, f"{prefix}/reward.txt"))
        if value != document.reward:
            found.append(f"reward.txt says {value}, the grade {document.reward}")
    return found


def metadata(client: Any, bucket: str, key: str) -> dict[str, str] | None:
    """The object's metadata; ``None`` when there is no such object."""
    from botocore.exceptions import ClientError

    try:
        return dict(client.head_object(Bucket=bucket, Key=key).get("Metadata", {}))
    except ClientError as error:
        if error.response["Error"]["Code"] in ("404", "NoSuchKey"):
            return None
        raise


def plant(client: Any, bucket: str, prefix: str) -> None:
    for name, data in PLANTED.items():
        client.put_object(Bucket=bucket, Key=f"{prefix}/{name}", Body=data)


def etags_at(client: Any, bucket: str, prefix: str) -> dict[str, str]:
    """The run's listing as a sweep's planning would hand it over."""
    return {name: tag for name, (tag, _) in listing(client, bucket, prefix).items()}


class Scenario:
    """A run's prefix prepared in a given state, and the publish to make there."""

    def __init__(
        self,
        name: str,
        document: GradeDocument,
        prepare: Callable[[Any, str, str], None],
        replaces: str | None = None,
        listed: bool = False,
    ) -> None:
        self.name, self.document, self.prepare = name, document, prepare
        self.replaces, self.listed = replaces, listed

    def setup(self, client: Any, bucket: str, prefix: str) -> dict[str, str] | None:
        """Prepare ``prefix``; the listing to hand over, when the scenario does."""
        self.prepare(client, bucket, prefix)
        return etags_at(client, bucket, prefix) if self.listed else None


def scenarios(row: Callable[..., dict[str, Any]], s3_endpoint: str) -> dict[str, Scenario]:
    older = gradable(row, reward=1.0, tag="older")

    def nothing(client: Any, bucket: str, prefix: str) -> None:
        return None

    def an_older_grade(client: Any, bucket: str, prefix: str) -> None:
        publish(older, f"s3://{bucket}/{prefix}", storage_options=s3_options(s3_endpoint))

    zero, refusal = gradable(row, reward=0.0), ungradable(row)
    return {
        # The case: a gradable 0.0 over a planted reward of 1.0.
        "orphans": Scenario("orphans", zero, plant),
        "orphans-listed": Scenario("orphans-listed", zero, plant, listed=True),
        "orphans-refused": Scenario("orphans-refused", refusal, plant),
        "replace": Scenario("replace", zero, an_older_grade, replaces=older.digest),
        "fresh": Scenario("fresh", gradable(row), nothing),
        "fresh-listed": Scenario("fresh-listed", gradable(row), nothing, listed=True),
    }


def publish_in_child(
    raw: bytes, url: str, options: dict[str, Any], replaces: str | None, listing: Any
) -> None:
    """The killed process: one publish (its exit status is not looked at)."""
    publish(
        GradeDocument.from_bytes(raw),
        url,
        storage_options=options,
        replaces=replaces,
        listing=listing,
    )


def zygote_main(connection: multiprocessing.connection.Connection) -> None:
    """The zygote: imports :data:`PRELOAD` once, then for each publish it is
    sent forks a publisher (:func:`publish_in_child`), and sends back its
    pid and, once it has ended, its exit code. It runs one thread and
    nothing of its own, so each fork is a fresh publisher."""
    for name in PRELOAD:
        importlib.import_module(name)
    assert threading.active_count() == 1  # nothing that a fork would copy half-done
    fork = multiprocessing.get_context("fork")
    while True:
        try:
            args = connection.recv()
        except EOFError:
            return
        if args is None:
            return
        process = fork.Process(target=publish_in_child, args=args)
        process.start()
        connection.send(process.pid)
        process.join()
        connection.send(process.exitcode)


class Zygote:
    """Where the killed publishers are forked from. Not multiprocessing's
    forkserver: a process has one, preloading the modules of whoever starts
    it first (``truereward.checks``, when a test of theirs ran earlier in
    the worker), and without :data:`PRELOAD` each publisher would spend
    most of its life importing them."""

    def __init__(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._connection, theirs = context.Pipe()
        self._process = context.Process(target=zygote_main, args=(theirs,))
        self._process.start()
        theirs.close()

    def fork(self, *args: Any) -> int:
        """A publisher started on ``args`` (:func:`publish_in_child`'s): its pid."""
        self._connection.send(args)
        pid: int = self._connection.recv()
        return pid

    def exit_code(self, pid: int, timeout: float) -> int | None:
        """The exit code of the publisher :meth:`fork` started last, once it
        has ended; None when it has not within ``timeout`` (it is killed)."""
        if self._connection.poll(timeout):
            code: int = self._connection.recv()
            return code
        os.kill(pid, signal.SIGKILL)
        self._connection.recv()
        return None

    def close(self) -> None:
        self._connection.send(None)
        self._process.join(30)
        self._connection.close()


@pytest.fixture(scope="module")
def zygote() -> Iterator[Zygote]:
    started = Zygote()
    yield started
    started.close()


def finish(client: Any, bucket: str, prefix: str, scenario: Scenario, direct: dict) -> None:
    """After a kill or a failure: ``verify --repair`` where a grade stands
    (verify flags reward objects where none does), then a republish of the
    scenario's grade: the set is complete and verify finds nothing."""
    url = f"s3://{bucket}/{prefix}"
    target = Target(url=url, storage_options=direct)
    names = set(listing(client, bucket, prefix))
    if "grade.json" in names:
        repair_target(target)
        assert verify_target(target)[1] == []
    elif names & set(REWARD_FILES):
        with pytest.raises(RewardWithoutGrade) as caught:
            verify_target(target)
        assert {item.where for item in caught.value.found} == names & set(REWARD_FILES)
    publish(scenario.document, url, storage_options=direct, replaces=scenario.replaces)
    assert body(client, bucket, f"{prefix}/grade.json") == scenario.document.to_bytes()
    assert_consistent(client, bucket, prefix)
    assert verify_target(target)[1] == []


def requests_of(proxy: FaultProxy, client: Any, bucket: str, scenario: Scenario) -> int:
    """How many requests the scenario's publish sends, uninterrupted; the
    bucket is looked at before each of them."""
    prefix = f"{scenario.name}-whole"
    listed = scenario.setup(client, bucket, prefix)
    seen: list[str] = []

    def judge(number: int, method: str, path: str) -> None:
        seen.extend(strangers(client, bucket, prefix))

    proxy.reset()
    proxy.judge = judge
    try:
        publish(
            scenario.document,
            f"s3://{bucket}/{prefix}",
            storage_options=through(proxy),
            replaces=scenario.replaces,
            listing=listed,
        )
    finally:
        proxy.judge = None
    assert seen == []
    assert_consistent(client, bucket, prefix)
    return proxy.seen


def killed_at(
    zygote: Zygote,
    proxy: FaultProxy,
    client: Any,
    bucket: str,
    prefix: str,
    scenario: Scenario,
    at: int,
    applied: bool,
) -> tuple[int, list[str]]:
    """Publish the scenario at ``prefix`` in a process of its own, killed
    with SIGKILL when its request number ``at`` reaches the proxy; that
    request is then dropped, or sent on (``applied``: the store acts on it,
    its answer is lost). Returns the process's exit code and what stood
    beside a grade not its own, looked at before each request and after
    the kill."""
    listed = scenario.setup(client, bucket, prefix)
    started, dead = threading.Event(), threading.Event()
    pid = 0
    seen: list[str] = []

    def judge(number: int, method: str, path: str) -> str | None:
        seen.extend(strangers(client, bucket, prefix))
        if number != at:
            return None
        assert started.wait(30)
        os.kill(pid, signal.SIGKILL)  # with its request in the proxy's hands
        # Dead before its request is dropped or sent on (the zygote reaps
        # it, the main thread hears so: one reader of its exit status).
        assert dead.wait(30)
        return "cut" if applied else "reset"

    proxy.reset()
    proxy.judge = judge
    try:
        pid = zygote.fork(
            scenario.document.to_bytes(),
            f"s3://{bucket}/{prefix}",
            through(proxy),
            scenario.replaces,
            listed,
        )
        started.set()
        status = zygote.exit_code(pid, 60)
        dead.set()
        proxy.wait_idle()
    finally:
        proxy.judge = None
    assert status is not None, f"{prefix}: the publisher did not end"
    seen.extend(strangers(client, bucket, prefix))  # after the kill, before any repair
    return status, seen


@pytest.mark.slow
@pytest.mark.parametrize(
    "name", ["orphans", "orphans-listed", "orphans-refused", "replace", "fresh", "fresh-listed"]
)
def test_kill_9_at_every_request_never_leaves_a_reward_beside_another_grade(
    row, s3_endpoint, s3_client, bucket, proxy, zygote, name
):
    scenario = scenarios(row, s3_endpoint)[name]
    total = requests_of(proxy, s3_client, bucket, scenario)
    for at in range(1, total + 1):
        for applied in (False, True):
            prefix = f"{name}-{at:02d}-{'applied' if applied else 'dropped'}"
            status, seen = killed_at(
                zygote, proxy, s3_client, bucket, prefix, scenario, at, applied
            )
            assert status == -signal.SIGKILL, (prefix, status)  # died at its request
            assert seen == [], (prefix, seen)
            finish(s3_client, bucket, prefix, scenario, s3_options(s3_endpoint))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["orphans", "orphans-listed", "orphans-refused", "replace"])
def test_a_persistent_503_on_each_write_never_leaves_a_reward_beside_another_grade(
    row, s3_endpoint, s3_client, bucket, proxy, name
):
    """Write k (a DELETE or a PUT, counted in the order the publisher sends
    them) is refused with 503 SlowDown every time it is sent; each k runs on
    its own prefix, all at once. The writes after grade.json are sent
    together, so a refused one among them does not stop the others of its
    group; nothing after the group is sent."""
    scenario = scenarios(row, s3_endpoint)[name]
    whole = f"{name}-whole"
    listed = scenario.setup(s3_client, bucket, whole)
    proxy.reset()
    publish(
        scenario.document,
        f"s3://{bucket}/{whole}",
        storage_options=through(proxy),
        replaces=scenario.replaces,
        listing=listed,
    )
    writes = proxy.methods["PUT"] + proxy.methods["DELETE"]
    assert writes >= (4 if scenario.document.gradable else 2)
    prefixes = {k: f"{name}-w{k:02d}" for k in range(1, writes + 1)}
    listings = {k: scenario.setup(s3_client, bucket, p) for k, p in prefixes.items()}
    sent: dict[int, list[tuple[str, str]]] = {k: [] for k in prefixes}
    seen: list[str] = []
    lock = threading.Lock()

    def whose(path: str) -> int:
        """The publisher a request is from, by the prefix in its path (a
        key, or a listing's ``prefix=`` query)."""
        return next(k for k, p in prefixes.items() if f"/{p}/" in path or f"={p}%2F" in path)

    def judge(number: int, method: str, path: str) -> str | None:
        k = whose(path)
        found = strangers(s3_client, bucket, prefixes[k])
        key = (method, path.split("?", 1)[0])
        with lock:
            seen.extend(found)
            if method in ("PUT", "DELETE") and key not in sent[k]:
                sent[k].append(key)
            refused = key in sent[k] and sent[k].index(key) == k - 1
        return "503" if refused else None

    failures: dict[int, BaseException | None] = {}

    def publisher(k: int) -> None:
        try:
            publish(
                scenario.document,
                f"s3://{bucket}/{prefixes[k]}",
                storage_options=through(proxy),
                replaces=scenario.replaces,
                listing=listings[k],
            )
            failures[k] = None
        except PublishError as error:
            failures[k] = error

    proxy.reset()
    proxy.judge = judge
    threads = [threading.Thread(target=publisher, args=(k,)) for k in prefixes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    proxy.wait_idle()
    proxy.judge = None
    assert sorted(failures) == sorted(prefixes)
    assert all(isinstance(failure, PublishError) for failure in failures.values()), failures
    for k, prefix in prefixes.items():
        # The publish stopped at its refused write, or at the end of the
        # group of writes sent together with it (the PUTs after grade.json).
        after = sent[k][k:]
        assert len(sent[k]) >= k, (prefix, sent[k])
        assert all(
            method == "PUT" and not path.endswith("/grade.json") for method, path in after
        ), (prefix, sent[k])
        if after:
            assert not sent[k][k - 1][1].endswith("/grade.json"), (prefix, sent[k])
        seen.extend(strangers(s3_client, bucket, prefix))
    assert seen == [], seen
    for prefix in prefixes.values():
        finish(s3_client, bucket, prefix, scenario, s3_options(s3_endpoint))


def test_a_grade_over_reward_objects_it_does_not_own_deletes_them_first(
    row, s3_endpoint, s3_client, bucket, proxy
):
    plant(s3_client, bucket, "planted")
    document = gradable(row, reward=0.0)
    seen: list[str] = []
    order: list[tuple[str, str]] = []

    def judge(number: int, method: str, path: str) -> None:
        seen.extend(strangers(s3_client, bucket, "planted"))
        order.append((method, path.split("?", 1)[0].rsplit("/", 1)[-1]))

    proxy.judge = judge
    result = publish(document, f"s3://{bucket}/planted", storage_options=through(proxy))
    assert result.decision is PublishDecision.CREATE
    assert result.removed == ("reward.txt", "reward.json", "ctrf.json")
    assert seen == []
    assert order[:5] == [
        ("GET", bucket),  # the listing
        ("DELETE", "reward.txt"),
        ("DELETE", "reward.json"),
        ("DELETE", "ctrf.json"),
        ("PUT", "grade.json"),
    ]
    assert assert_consistent(s3_client, bucket, "planted")["reward"] == 0.0


def test_verify_of_one_run_prefix_flags_reward_objects_with_no_grade(
    row, s3_endpoint, s3_client, bucket, capsys
):
    from truereward.cli import main

    flags = [
        f"--storage-option=endpoint_url={s3_endpoint}",
        "--storage-option=key=testing",
        "--storage-option=secret=testing",
        "--storage-option=client_kwargs.region_name=us-east-1",
    ]
    for name, data in PLANTED.items():
        if name != "ctrf.json":
            s3_client.put_object(Bucket=bucket, Key=f"sweep/run-1/{name}", Body=data)
    run = f"s3://{bucket}/sweep/run-1"
    assert main(["verify", run, *flags]) == 1
    out = capsys.readouterr().out
    assert f"{run}: reward.txt, reward.json with no grade.json beside them" in out
    assert f"{run}: reward.txt: stored 'present', expected 'absent (no grade.json" in out
    assert main(["verify", f"s3://{bucket}/sweep", *flags]) == 1  # the same run, in its sweep
    out = capsys.readouterr().out
    assert f"{run}: reward.txt, reward.json with no grade.json beside them" in out
    assert "1 runs, 0 consistent, 0 repaired, 1 inconsistent, 0 unreadable" in out
    publish(gradable(row, reward=0.0), run, storage_options=s3_options(s3_endpoint))
    assert main(["verify", run, *flags]) == 0


@pytest.mark.slow
def test_reward_objects_past_the_first_page_of_a_listing_are_cleared_too(
    row, s3_endpoint, s3_client, bucket, proxy
):
    # A run graded in place keeps its evidence beside the grade: more than a
    # page (1,000 keys) of it sorting between our names pushes reward.txt to
    # a later page of the listing, which must still be read.
    from concurrent.futures import ThreadPoolExecutor

    def put(index: int) -> None:
        s3_client.put_object(Bucket=bucket, Key=f"run/evidence-{index:04d}.xml", Body=b"<x/>")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, range(1100)))
    plant(s3_client, bucket, "run")
    seen: list[str] = []
    proxy.judge = lambda number, method, path: seen.extend(strangers(s3_client, bucket, "run"))
    document = gradable(row, reward=0.0)
    result = publish(document, f"s3://{bucket}/run", storage_options=through(proxy))
    assert result.removed == ("reward.txt", "reward.json", "ctrf.json")
    assert seen == []
    assert proxy.methods["GET"] == 2  # one listing, of two pages
    again = publish(document, f"s3://{bucket}/run", storage_options=through(proxy))
    assert again.decision is PublishDecision.SAME and not again.changed


@pytest.mark.slow
def test_publishers_racing_over_reward_objects_left_without_a_grade_end_with_one_winner(
    row, s3_endpoint, s3_client, bucket
):
    # Each racer sees the planted objects and deletes them (conditionally)
    # before its create: exactly one create wins, the others are conflicts,
    # and the set is the winner's, whoever deleted what.
    from truereward import grade_document
    from truereward.grade.files import render

    options = s3_options(s3_endpoint)
    for repetition in range(6):
        prefix = f"race/run-{repetition}"
        documents = [
            gradable(row, reward=float(i % 2), tag=f"r{repetition}-{i}")
            if i % 4
            else grade_document([row("a"), row(f"u{repetition}-{i}", verdict="ungradable")])
            for i in range(16)
        ]
        # The planted objects carry the bytes one racer will write: a
        # conditional delete cannot tell them from that racer's own.
        plant(s3_client, bucket, prefix)
        for name, data in render(documents[1]).items():
            if name != "grade.json":
                s3_client.put_object(Bucket=bucket, Key=f"{prefix}/{name}", Body=data)
        start = time.time() + 0.3
        outcomes = [""] * len(documents)

        def run(index: int, url: str, start: float, docs: list, outcomes: list) -> None:
            outcomes[index] = publish_at(start, docs[index].to_bytes(), url, options)

        url = f"s3://{bucket}/{prefix}"
        threads = [
            threading.Thread(target=run, args=(i, url, start, documents, outcomes))
            for i in range(len(documents))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        errors = [outcome for outcome in outcomes if outcome.startswith("error")]
        winners = [outcome for outcome in outcomes if outcome not in ("conflict", *errors)]
        assert not errors and len(winners) == 1, outcomes
        assert_consistent(s3_client, bucket, prefix)
        assert strangers(s3_client, bucket, prefix) == []
        published = body(s3_client, bucket, f"{prefix}/grade.json")
        assert hashlib.sha256(published).hexdigest() == winners[0]
