"""Publishing to S3 through s3fs, against moto's S3 server on loopback."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import threading
import time

import pytest

from tests.conftest import s3_options
from tests.support.s3_published import (
    assert_consistent,
    body,
    gradable,
    listing,
    publish_at,
    ungradable,
)
from truereward import PublishConflict, PublishError, grade_document, publish
from truereward.publishing import PublishDecision, Target
from truereward.publishing.objects import MAX_BODY_BYTES


def test_create_if_absent_then_idempotent_republish(row, s3_endpoint, s3_client, bucket):
    url = f"s3://{bucket}/sweep/run-1"
    document = gradable(row)
    result = publish(document, url, storage_options=s3_options(s3_endpoint))
    assert result.decision is PublishDecision.CREATE
    assert result.written == ("grade.json", "ctrf.json", "reward.json", "reward.txt")
    assert body(s3_client, bucket, "sweep/run-1/grade.json") == document.to_bytes()
    assert body(s3_client, bucket, "sweep/run-1/reward.txt") == b"1.0\n"
    before = listing(s3_client, bucket, "sweep/run-1")
    again = publish(document, url, storage_options=s3_options(s3_endpoint))
    assert again.decision is PublishDecision.SAME and not again.changed
    assert listing(s3_client, bucket, "sweep/run-1") == before
    assert_consistent(s3_client, bucket, "sweep/run-1")


def test_compare_and_swap_replace_by_digest_and_by_etag(row, s3_endpoint, s3_client, bucket):
    url, options = f"s3://{bucket}/run", s3_options(s3_endpoint)
    first, second, third = ungradable(row), gradable(row), gradable(row, reward=0.0)
    publish(first, url, storage_options=options)
    result = publish(second, url, storage_options=options, replaces=first.digest)
    assert result.decision is PublishDecision.REPLACE
    assert body(s3_client, bucket, "run/reward.txt") == b"1.0\n"
    etag = listing(s3_client, bucket, "run")["grade.json"][0]
    publish(third, url, storage_options=options, replaces=etag)
    assert body(s3_client, bucket, "run/reward.txt") == b"0.0\n"
    assert_consistent(s3_client, bucket, "run")


def test_a_stale_etag_or_digest_is_refused_and_changes_nothing(row, s3_endpoint, s3_client, bucket):
    url, options = f"s3://{bucket}/run", s3_options(s3_endpoint)
    first = gradable(row, reward=0.0)
    publish(first, url, storage_options=options)
    stale_etag = listing(s3_client, bucket, "run")["grade.json"][0]
    second = gradable(row)
    publish(second, url, storage_options=options, replaces=first.digest)
    before = listing(s3_client, bucket, "run")
    for stale in (stale_etag, first.digest):
        with pytest.raises(PublishConflict):
            publish(ungradable(row), url, storage_options=options, replaces=stale)
    assert listing(s3_client, bucket, "run") == before


@pytest.mark.parametrize("loser", ["gradable", "ungradable"])
def test_a_conflicting_publisher_never_touches_the_winners_objects(
    row, s3_endpoint, s3_client, bucket, loser
):
    url, options = f"s3://{bucket}/run", s3_options(s3_endpoint)
    winner = gradable(row)
    publish(winner, url, storage_options=options)
    before = listing(s3_client, bucket, "run")
    other = gradable(row, reward=0.0) if loser == "gradable" else ungradable(row)
    with pytest.raises(PublishConflict) as caught:
        publish(other, url, storage_options=options)
    assert caught.value.existing == winner.digest
    assert listing(s3_client, bucket, "run") == before


def test_an_ungradable_grade_clears_stale_reward_objects(row, s3_endpoint, s3_client, bucket):
    s3_client.put_object(Bucket=bucket, Key="run/reward.txt", Body=b"1.0\n")
    s3_client.put_object(Bucket=bucket, Key="run/reward.json", Body=b'{"reward": 1.0}')
    result = publish(ungradable(row), f"s3://{bucket}/run", storage_options=s3_options(s3_endpoint))
    assert result.removed == ("reward.txt", "reward.json")
    assert set(listing(s3_client, bucket, "run")) == {"ctrf.json", "grade.json"}


def test_replacing_gradable_with_ungradable_clears_the_reward(row, s3_endpoint, s3_client, bucket):
    url, options = f"s3://{bucket}/run", s3_options(s3_endpoint)
    first = gradable(row)
    publish(first, url, storage_options=options)
    publish(ungradable(row), url, storage_options=options, replaces=first.digest)
    assert set(listing(s3_client, bucket, "run")) == {"ctrf.json", "grade.json"}
    assert_consistent(s3_client, bucket, "run")


def test_republish_repairs_an_unfinished_set(row, s3_endpoint, s3_client, bucket):
    url, options = f"s3://{bucket}/run", s3_options(s3_endpoint)
    document = gradable(row)
    publish(document, url, storage_options=options)
    s3_client.delete_object(Bucket=bucket, Key="run/reward.txt")
    s3_client.put_object(Bucket=bucket, Key="run/ctrf.json", Body=b"{}")
    result = publish(document, url, storage_options=options)
    assert result.decision is PublishDecision.SAME
    assert result.written == ("ctrf.json", "reward.txt")
    assert_consistent(s3_client, bucket, "run")


def test_bodies_above_the_cap_are_refused(row, s3_endpoint, bucket, monkeypatch):
    from truereward.publishing import objects

    monkeypatch.setattr(objects, "MAX_BODY_BYTES", 100)
    with pytest.raises(PublishError, match="cap for single-request conditional writes"):
        publish(gradable(row), f"s3://{bucket}/run", storage_options=s3_options(s3_endpoint))
    assert MAX_BODY_BYTES < 100 << 20  # under s3fs's multipart threshold (2 x 50 MiB)


def test_an_unreachable_store_is_a_publish_error(row):
    options = s3_options("http://127.0.0.1:9", connect_timeout=0.5, retries={"max_attempts": 1})
    with pytest.raises(PublishError, match=r"s3://nowhere/run: listing failed.*Could not connect"):
        publish(gradable(row), "s3://nowhere/run", storage_options=options)


@pytest.mark.parametrize("refused", [False, True])
def test_a_missing_bucket_is_a_publish_error(row, s3_endpoint, refused):
    grade = ungradable(row) if refused else gradable(row)
    with pytest.raises(
        PublishError, match=r"s3://no-such-bucket/run: bucket 'no-such-bucket' does"
    ):
        publish(grade, "s3://no-such-bucket/run", storage_options=s3_options(s3_endpoint))


def test_target_model_hides_secrets_and_joins_segments(s3_endpoint):
    target = Target(url="s3://grades/sweep", storage_options=s3_options(s3_endpoint))
    assert "testing" not in repr(target)
    assert "testing" not in json.dumps(target.model_dump(mode="json"))
    assert target.options()["secret"] == "testing"
    assert target.child("run-1").url == "s3://grades/sweep/run-1"
    for bad in ("..", "a/b", "", "x\n"):
        with pytest.raises(ValueError, match=r"segment|whitespace|contains"):
            target.child(bad)


def test_publishing_through_a_target_object(row, s3_endpoint, s3_client, bucket):
    target = Target(url=f"s3://{bucket}/sweep", storage_options=s3_options(s3_endpoint))
    publish(gradable(row), target.child("run-7"))
    assert_consistent(s3_client, bucket, "sweep/run-7")


# --- races ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_threads_and_processes_racing_end_with_exactly_one_winner(
    row, s3_endpoint, s3_client, bucket
):
    options = s3_options(s3_endpoint)
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        pool.map(time.sleep, [0.0] * 4)  # the processes are up before the first race
        for repetition in range(20):
            url = f"s3://{bucket}/race/run-{repetition}"
            documents = [
                gradable(row, reward=1.0 if i % 3 else 0.0, tag=f"g{repetition}-{i}")
                if i % 4
                else ungradable(row)
                if i == 0
                else grade_document([row("a"), row(f"u{i}", verdict="ungradable")])
                for i in range(20)
            ]
            start = time.time() + 0.3
            remote = [
                pool.apply_async(publish_at, (start, d.to_bytes(), url, options))
                for d in documents[16:]
            ]
            outcomes: list[str] = [""] * 16

            def run(
                index: int,
                url: str = url,
                start: float = start,
                documents: list = documents,
                outcomes: list = outcomes,
            ) -> None:
                outcomes[index] = publish_at(start, documents[index].to_bytes(), url, options)

            threads = [threading.Thread(target=run, args=(i,)) for i in range(16)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            outcomes += [item.get(timeout=60) for item in remote]
            errors = [outcome for outcome in outcomes if outcome.startswith("error")]
            winners = [
                outcome for outcome in outcomes if outcome != "conflict" and outcome not in errors
            ]
            assert not errors and len(winners) == 1, outcomes
            grade = assert_consistent(s3_client, bucket, f"race/run-{repetition}")
            published = body(s3_client, bucket, f"race/run-{repetition}/grade.json")
            assert hashlib.sha256(published).hexdigest() == winners[0]
            assert grade["gradable"] in (True, False)


@pytest.mark.slow
def test_a_replacer_racing_the_publisher_it_replaces_ends_consistent(
    row, s3_endpoint, s3_client, bucket
):
    # B publishes a gradable grade; C keeps trying to replace exactly that
    # grade (naming its digest) with a refusal, so C's replace lands while B
    # is still writing ctrf.json and the reward objects. Whoever finishes
    # last settles the set: never a reward beside the refusal at the end.
    options = s3_options(s3_endpoint)
    first, refusal = gradable(row), ungradable(row)
    for repetition in range(12):
        url = f"s3://{bucket}/replacer/run-{repetition}"
        outcome: dict[str, str] = {}

        def publisher(url: str = url, outcome: dict = outcome) -> None:
            outcome["B"] = publish(first, url, storage_options=options).decision.value

        def replacer(url: str = url, outcome: dict = outcome) -> None:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    result = publish(refusal, url, storage_options=options, replaces=first.digest)
                except PublishConflict:
                    continue
                outcome["C"] = result.decision.value
                return

        threads = [threading.Thread(target=replacer), threading.Thread(target=publisher)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert outcome == {"B": "create", "C": "replace"}, outcome
        grade = assert_consistent(s3_client, bucket, f"replacer/run-{repetition}")
        assert grade["gradable"] is False


# --- other fsspec backends ------------------------------------------------------------------


def test_memory_backend_has_the_same_semantics(row):
    import fsspec

    url = "memory://truereward-tests/run-1"
    first, second = gradable(row), ungradable(row)
    publish(first, url)
    assert publish(first, url).decision is PublishDecision.SAME
    with pytest.raises(PublishConflict):
        publish(second, url)
    publish(second, url, replaces=first.digest)
    fs = fsspec.filesystem("memory")
    assert sorted(p.rsplit("/", 1)[1] for p in fs.ls("/truereward-tests/run-1", detail=False)) == [
        "ctrf.json",
        "grade.json",
    ]


def test_a_backend_without_conditional_writes_needs_an_explicit_opt_in(row):
    import fsspec
    from fsspec.implementations.memory import MemoryFileSystem

    class PlainFileSystem(MemoryFileSystem):
        protocol = "plainfs"
        store: dict = {}  # noqa: RUF012 - fsspec's memory store is a class attribute
        pseudo_dirs = [""]  # noqa: RUF012

    fsspec.register_implementation("plainfs", PlainFileSystem, clobber=True)
    with pytest.raises(PublishError, match="cannot write conditionally"):
        publish(gradable(row), "plainfs://bucket/run")
    result = publish(gradable(row), "plainfs://bucket/run", unconditional=True)
    assert result.decision is PublishDecision.CREATE


# --- the command line --------------------------------------------------------------------


@pytest.mark.slow
def test_cli_publishes_to_s3_with_storage_options(row, s3_endpoint, s3_client, bucket, tmp_path):
    import subprocess
    import sys

    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(row("a")) + "\n" + json.dumps(row("g", "pass_to_pass")) + "\n")
    command = [
        sys.executable,
        "-m",
        "truereward",
        "fold",
        str(rows),
        "--logs",
        f"s3://{bucket}/cli/run-1",
        "--storage-option",
        "key=testing",
        "--storage-option",
        "secret=testing",
        "--storage-option",
        f"endpoint_url={s3_endpoint}",
        "--storage-option",
        "client_kwargs.region_name=us-east-1",
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert_consistent(s3_client, bucket, "cli/run-1")
    command[command.index(f"s3://{bucket}/cli/run-1")] = "s3://no-such-bucket/run-1"
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 4, result.stderr  # the target could not be written
    assert "bucket 'no-such-bucket' does not exist" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_cli_takes_credentials_from_the_aws_environment(
    row, s3_endpoint, s3_client, bucket, tmp_path
):
    import os
    import subprocess
    import sys

    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(row("a")) + "\n")
    env = {
        **os.environ,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_ENDPOINT_URL": s3_endpoint,
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    command = [
        sys.executable,
        "-m",
        "truereward",
        "fold",
        str(rows),
        "--logs",
        f"s3://{bucket}/env/run-1",
    ]
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, result.stderr
    assert_consistent(s3_client, bucket, "env/run-1")
    again = subprocess.run(
        [*command[:4], str(tmp_path / "other.jsonl"), *command[5:]],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert again.returncode == 2  # the rows file does not exist: bad input, nothing published


def test_cli_refuses_a_bad_storage_option(row, tmp_path):
    from truereward.cli import main

    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(row("a")) + "\n")
    assert main(["fold", str(rows), "--logs", "memory://x/y", "--storage-option", "novalue"]) == 2


def test_an_option_s3fs_does_not_take_is_bad_input_before_any_request(
    row, s3_endpoint, tmp_path, capsys
):
    from truereward.cli import main
    from truereward.publishing import BadStorageOptions

    options = {**s3_options(s3_endpoint), "bogus_opt": 1}
    with pytest.raises(BadStorageOptions, match="bogus_opt"):
        publish(gradable(row), "s3://nowhere/run", storage_options=options)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(row("a")) + "\n")
    command = ["fold", str(rows), "--logs", "s3://nowhere/run"]
    command += ["--storage-option", f"endpoint_url={s3_endpoint}", "--storage-option", "bogus=1"]
    assert main(command) == 2
    assert "--storage-option" in capsys.readouterr().err
