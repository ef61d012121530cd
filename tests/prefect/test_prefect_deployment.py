"""End to end, as an ops team runs it: ``prefect server start``, ``prefect
deploy --prefect-file infra/prefect.yaml --name local``, a process worker,
``prefect deployment run 'grade-run/local' -p request=... --watch``; a bad
request refused when the run is created, naming its field; a worker killed
mid-sweep, then the flow run again: every run graded once, nothing lost; an
outage of the evidence store found with ``sweep retries`` and healed with a
regrade; a sweep that cannot be graded at all says why."""

from __future__ import annotations

import collections
import json
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.support.deployment import deployed, deployed_alone, prefect, run_deployment, worker
from tests.support.faultproxy import FaultProxy
from tests.support.server import offline_env
from tests.support.sweeps import make_sweep, published, quicken, snapshot
from truereward.grading.shards import launch_order, shard_of

__all__ = ["deployed", "deployed_alone"]  # the fixtures, imported from .deployment

pytestmark = [pytest.mark.slow, pytest.mark.longest]


def test_deployed_grade_run_end_to_end(
    deployed: dict[str, str], s3_endpoint: str, s3_client: Any, bucket: str, tmp_path: Path
) -> None:
    # One test, in sequence: a single worker polls the pool at any time, so
    # the worker killed below is the one running the flow run, and no worker
    # picks up another scenario's flow run.
    grades_the_sweep_and_refuses_a_bad_request(deployed, tmp_path / "first")
    a_worker_killed_mid_sweep_then_a_rerun_grades_every_run_once(deployed, tmp_path / "second")
    an_outage_found_with_sweep_retries_is_healed_with_regrade(
        deployed, s3_endpoint, s3_client, bucket, tmp_path / "outage"
    )
    a_sweep_that_cannot_be_graded_says_why_and_a_bad_request_names_its_field(
        deployed, tmp_path / "not-started"
    )


def test_deployed_grade_sweep_end_to_end(deployed_alone: dict[str, str], tmp_path: Path) -> None:
    # A test of its own, on a server of its own (deployed_alone), so that
    # pytest-xdist runs it beside the one above.
    a_sweep_sharded_over_two_workers_grades_every_run_once(deployed_alone, tmp_path / "shards")
    a_worker_killed_mid_shard_then_the_parent_again_completes_the_sweep(
        deployed_alone, tmp_path / "shard-restart"
    )


def grades_the_sweep_and_refuses_a_bad_request(deployed: dict[str, str], tmp_path: Path) -> None:
    kinds: dict[str, Any] = {
        "r1": "pass",
        "r2": "fail",
        "r3": ("heal", 1),
        "r4": "never",
        "r5": "missing",
        "r6": "malformed",
    }
    sweep = make_sweep(tmp_path / "sweep", kinds)
    out = tmp_path / "out"
    request = {
        "sweep": str(sweep),
        "target": str(out),
        "max_attempts": 2,
        "retry_delay_seconds": 0.1,
    }
    tmp_path.mkdir(parents=True, exist_ok=True)
    with worker(deployed, tmp_path / "worker.log"):
        ran = run_deployment(deployed, request)
    log = (tmp_path / "worker.log").read_text(errors="replace")[-3000:]
    assert ran.returncode == 0, ran.stdout + ran.stderr + log
    assert "Graded with refusals" in ran.stdout
    files = published(out)
    assert sorted(files) == sorted(kinds)
    expected = {
        "r1": (True, 1.0, [], 1),
        "r2": (True, 0.0, [], 1),
        "r3": (True, 1.0, [], 2),
        "r4": (False, None, ["EVIDENCE_UNREADABLE"], 2),
        "r5": (False, None, ["EVIDENCE_MISSING"], 1),
        "r6": (False, None, ["EVIDENCE_MALFORMED"], 1),
    }
    for run, (gradable, reward, codes, attempt) in expected.items():
        grade = files[run]["grade"]
        assert grade["gradable"] is gradable and grade["reward"] == reward, run
        assert sorted(item["code"] for item in grade["refusals"]) == codes, run
        assert grade["run"]["attempt"] == attempt and len(grade["attempts"]) == attempt - 1, run
        reward_files = {"reward.json", "reward.txt"} <= set(files[run]["files"])
        assert reward_files is gradable, run
        assert {"grade.json", "ctrf.json"} <= set(files[run]["files"]), run

    # Refused when the run is created: both sweep and runs, a bound (neither
    # sweep nor runs is refused, naming the field, in the last scenario).
    for bad in (
        {"sweep": str(sweep), "runs": [str(sweep / "r1")]},
        {"sweep": str(sweep), "max_attempts": 0},
    ):
        refused = run_deployment(deployed, bad, watch=False)
        assert refused.returncode != 0, bad
        assert "Error creating flow run" in refused.stdout + refused.stderr, bad


def a_worker_killed_mid_sweep_then_a_rerun_grades_every_run_once(
    deployed: dict[str, str], tmp_path: Path
) -> None:
    tmp_path.mkdir(parents=True, exist_ok=True)
    # 12 runs, one chunk each, one at a time: the kill after 4 lands mid-sweep
    # (a chunk is three task runs, about a second a run here), and the rerun
    # grades the other 8.
    runs = {f"run-{index:02d}": ("slow", 0.25) for index in range(12)}
    sweep = make_sweep(tmp_path / "sweep", runs)
    out = tmp_path / "out"
    request = {"sweep": str(sweep), "target": str(out), "concurrency": 1, "chunk_size": 1}
    with worker(deployed, tmp_path / "worker-1.log"):
        started = run_deployment(deployed, request, watch=False)
        assert started.returncode == 0, started.stdout + started.stderr
        deadline = time.monotonic() + 180
        while len(list(out.glob("*/reward.txt"))) < 4:
            assert time.monotonic() < deadline, "the first flow run published nothing"
            time.sleep(0.2)
        # The worker and its flow run die here, mid-sweep.
    done_before = {path.parent.name: path.parent for path in out.glob("*/grade.json")}
    time.sleep(1.5)
    assert len(list(out.glob("*/grade.json"))) == len(done_before)  # nothing goes on
    assert 4 <= len(done_before) < len(runs)
    kept = {run: (path / "grade.json").read_bytes() for run, path in done_before.items()}
    quicken(sweep, 0.05)

    with worker(deployed, tmp_path / "worker-2.log"):
        ran = run_deployment(deployed, request)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "Graded" in ran.stdout
    files = published(out)
    assert sorted(files) == sorted(runs)
    for run, item in files.items():
        grade = item["grade"]
        assert grade["gradable"] and grade["run"]["attempt"] == 1 and grade["attempts"] == []
        assert "reward.txt" in item["files"], run
        assert not [name for name in item["files"] if name.endswith(".tmp")], run
    for run, data in kept.items():
        assert (out / run / "grade.json").read_bytes() == data  # graded once, not again


CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
RUNS: dict[str, Any] = {
    "ok": "pass",
    "fails": "fail",
    "down-a": "pass",  # the store is down for these two during the first flow run
    "down-b": "pass",
    "blamed": "missing",  # the run left no evidence: its own fault
}


def upload(s3_client: Any, bucket: str, local: Path, prefix: str) -> None:
    for path in sorted(local.rglob("*")):
        if path.is_file():
            key = f"{prefix}/{path.relative_to(local).as_posix()}"
            s3_client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())


def truereward(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(Path(sys.executable).with_name("truereward")), *args],
        env={**offline_env(), **CREDENTIALS},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def an_outage_found_with_sweep_retries_is_healed_with_regrade(
    deployed: dict[str, str], s3_endpoint: str, s3_client: Any, bucket: str, tmp_path: Path
) -> None:
    """The evidence is on S3 (moto's server), behind a proxy that answers
    ``503 SlowDown`` for part of the bucket during the first flow run: every
    read of those runs fails with a retryable grader fault, so they are
    published refused after their last attempt. ``truereward sweep retries``
    lists exactly those runs and prints the command that grades them again;
    once the store is healed, that very command (``prefect deployment run
    'grade-run/local' -p request='{... "regrade": "grader-refusals"}'
    --watch``) grades exactly those again, each new document carrying the
    attempts of both flow runs, the other runs untouched byte for byte;
    ``sweep retries --still-refused`` is then empty."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    local = make_sweep(tmp_path / "nightly", RUNS)
    upload(s3_client, bucket, local, "nightly")
    host, port = s3_endpoint.removeprefix("http://").split(":")
    proxy = FaultProxy((host, int(port)))
    sweep = f"s3://{bucket}/nightly"
    out = tmp_path / "graded"
    options = {
        "endpoint_url": proxy.endpoint,
        "client_kwargs": {"region_name": "us-east-1"},
        # One attempt a request (botocore's max_attempts would count retries): s3fs's own
        # tries remain.
        "config_kwargs": {"retries": {"total_max_attempts": 1}},
    }
    request = {
        "sweep": sweep,
        "target": str(out),
        "storage_options": options,
        "max_attempts": 2,
        "retry_delay_seconds": 0.2,
    }
    env = {**deployed, **CREDENTIALS}  # the worker reads S3 with these
    try:
        proxy.outage("/nightly/down-")
        with worker(env, tmp_path / "worker-1.log"):
            first = run_deployment(env, request)
        log = (tmp_path / "worker-1.log").read_text(errors="replace")[-3000:]
        assert first.returncode == 0, first.stdout + first.stderr + log
        assert "Graded with refusals" in first.stdout
        assert proxy.refused > 0
        # A retried read's log line names the run, the code and the reason
        # (the flow run's logs, as the process worker shows them).
        flow_log = " ".join((tmp_path / "worker-1.log").read_text(errors="replace").split())
        assert "run down-a: attempt 1 refused: EVIDENCE_UNREADABLE (grader):" in flow_log
        grades = {run: json.loads((out / run / "grade.json").read_bytes()) for run in RUNS}
        for run in ("down-a", "down-b"):
            assert [item["code"] for item in grades[run]["refusals"]] == ["EVIDENCE_UNREADABLE"]
            assert grades[run]["run"]["attempt"] == 2 and len(grades[run]["attempts"]) == 1
        assert grades["ok"]["reward"] == 1.0 and grades["fails"]["reward"] == 0.0
        assert grades["blamed"]["refusals"][0]["blame"] == "run"

        # Ops find exactly those runs, and the command that grades them again.
        storage = [
            f"--storage-option=endpoint_url={s3_endpoint}",
            '--storage-option=client_kwargs={"region_name": "us-east-1"}',
        ]
        listed = truereward(
            "sweep", "retries", str(out), "--format", "json", "--runs", sweep, *storage
        )
        assert listed.returncode == 0, listed.stderr
        retries = json.loads(listed.stdout)
        assert [item["run"] for item in retries["runs"]] == ["down-a", "down-b"]
        assert all(item["still_refused"] for item in retries["runs"])
        command = shlex.split(retries["regrade"]["deployment"])
        assert command[:4] == ["prefect", "deployment", "run", "grade-run/local"]
        assert command[-1] == "--watch"
        again = json.loads(command[5].removeprefix("request="))
        assert again == {
            "regrade": "grader-refusals",
            "storage_options": {
                "client_kwargs": {"region_name": "us-east-1"},
                "endpoint_url": s3_endpoint,
            },
            "sweep": sweep,
            "target": str(out),
        }

        # The store is fixed; the printed command is run as it is.
        proxy.outage(None)
        # The sweep report changes with the sweep; every run but those is untouched.
        before = {
            name: data
            for name, data in snapshot(out).items()
            if "/" in name and "down-" not in name
        }
        with worker(env, tmp_path / "worker-2.log"):
            second = prefect(env, *command[1:], "--watch-timeout", "240")
        log = (tmp_path / "worker-2.log").read_text(errors="replace")[-3000:]
        assert second.returncode == 0, second.stdout + second.stderr + log
        assert "Graded with refusals" in second.stdout  # blamed stays refused: the run's fault
        after = snapshot(out)
        assert {
            name: data for name, data in after.items() if "/" in name and "down-" not in name
        } == before
        for run in ("down-a", "down-b"):
            grade = json.loads((out / run / "grade.json").read_bytes())
            assert grade["gradable"] and grade["reward"] == 1.0
            # Both flow runs' attempts, oldest first, then this one's own.
            assert [item["attempt"] for item in grade["attempts"]] == [1, 2]
            assert all(not item["gradable"] for item in grade["attempts"])
            assert grade["attempts"][1]["refusals"] == grades[run]["refusals"]
            assert grade["run"]["attempt"] == 3
            assert (out / run / "reward.txt").read_text() == "1.0\n"

        still = truereward("sweep", "retries", str(out), "--still-refused", "--format", "json")
        assert still.returncode == 0, still.stderr
        assert json.loads(still.stdout)["runs"] == []
        assert json.loads(still.stdout)["still_refused"] == 0
    finally:
        proxy.close()


def a_sweep_that_cannot_be_graded_says_why_and_a_bad_request_names_its_field(
    deployed: dict[str, str], tmp_path: Path
) -> None:
    tmp_path.mkdir(parents=True, exist_ok=True)
    with worker(deployed, tmp_path / "worker.log"):
        missing = run_deployment(deployed, {"sweep": str(tmp_path / "no-such-sweep")})
    assert missing.returncode == 1, missing.stdout + missing.stderr
    # --watch prints the final state's name, which says why.
    printed = " ".join(missing.stdout.split())  # the console wraps long lines
    assert "Flow run finished in state 'Not started: sweep: " in printed
    assert "no-such-sweep: no such directory'" in printed
    unknown = run_deployment(
        deployed, {"sweep": str(ROOT / "samples" / "sweep"), "reader": "nope"}, watch=False
    )
    assert unknown.returncode != 0
    assert "request.reader" in unknown.stdout + unknown.stderr
    assert "'ctrf'" in unknown.stdout + unknown.stderr  # the known readers are listed
    neither = run_deployment(deployed, {"target": str(tmp_path)}, watch=False)
    assert neither.returncode != 0
    assert "'sweep' is a required property" in neither.stdout + neither.stderr


def flow_runs_named(env: dict[str, str], prefix: str) -> list[Any]:
    """The flow runs whose names start with ``prefix``."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    settings = temporary_settings(updates={PREFECT_API_URL: env["PREFECT_API_URL"]})
    with settings, get_client(sync_client=True) as client:
        runs = client.read_flow_runs(limit=200)
    return [run for run in runs if run.name.startswith(prefix)]


def artifacts_named(env: dict[str, str], prefix: str) -> dict[str, Any]:
    """The artifacts whose keys start with ``prefix``, by key."""
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    settings = temporary_settings(updates={PREFECT_API_URL: env["PREFECT_API_URL"]})
    with settings, get_client(sync_client=True) as client:
        found = client.read_artifacts(limit=200)
    return {item.key: item for item in found if item.key and item.key.startswith(prefix)}


def a_sweep_sharded_over_two_workers_grades_every_run_once(
    deployed: dict[str, str], tmp_path: Path
) -> None:
    """grade-sweep/local with 4 shards and two process workers: a 400-run
    sweep, each run graded once, each shard a flow run of its own."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    runs = {f"r{index:04d}": "pass" if index % 10 else "fail" for index in range(400)}
    sweep = make_sweep(tmp_path / "big", runs, cases=2)
    out = tmp_path / "out"
    request = {"sweep": str(sweep), "target": str(out), "shards": 4}
    with worker(deployed, tmp_path / "w1.log"), worker(deployed, tmp_path / "w2.log"):
        ran = run_deployment(deployed, request, deployment="grade-sweep/local")
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert "Flow run finished successfully in 'Graded'." in ran.stdout  # failing runs are graded
    grades = sorted(path.parent.name for path in out.glob("*/grade.json"))
    assert grades == sorted(runs)  # every run once: one directory, one grade, each
    for path in out.glob("*/grade.json"):
        assert json.loads(path.read_text())["run"]["attempt"] == 1
    shards = flow_runs_named(deployed, "grade-run-big-shard-")
    assert sorted(run.name for run in shards) == [f"grade-run-big-shard-{i}" for i in range(4)]
    assert all(run.state is not None and run.state.is_completed() for run in shards)
    # Created largest first, so that workers take the longest shards first.
    sizes = collections.Counter(shard_of(run, 4) for run in runs)
    created = [int(run.name.rsplit("-", 1)[1]) for run in sorted(shards, key=lambda r: r.created)]
    assert created == launch_order(sizes), sizes
    # infra/prefect.yaml puts parents on a queue of their own, which workers
    # started without --work-queue serve too (docs/scale.md).
    assert {run.work_queue_name for run in shards} == {"default"}
    parents = flow_runs_named(deployed, "grade-sweep-big")
    assert [run.work_queue_name for run in parents] == ["parents"]
    # The documents name the sweep, as if it had been graded whole.
    assert json.loads((out / "r0001" / "grade.json").read_text())["run"]["sweep"] == "big"
    # The parent's artifacts: the whole sweep's summary and one row per shard.
    # A small fixed set of keys per sweep: the parent's two; the shards'
    # artifacts are on their flow runs, without a key.
    assert not artifacts_named(deployed, "grade-run-big-")
    found = artifacts_named(deployed, "grade-sweep-big-")
    to = "to-" + re.sub(r"[^a-z0-9]+", "-", str(out).lower()).strip("-")[-40:].strip("-")
    assert sorted(found) == [f"grade-sweep-big-{to}-shards", f"grade-sweep-big-{to}-summary"]
    summary = found[f"grade-sweep-big-{to}-summary"]
    assert "400 runs" in (summary.description or ""), summary.description
    assert found[f"grade-sweep-big-{to}-shards"].type == "table"


def a_worker_killed_mid_shard_then_the_parent_again_completes_the_sweep(
    deployed: dict[str, str], tmp_path: Path
) -> None:
    tmp_path.mkdir(parents=True, exist_ok=True)
    # 24 runs of one chunk each in 2 shards, 12 a shard, each read taking
    # 0.5 s: slow enough that the kills land mid-shard (the first worker goes
    # on for 2 s after the second's), few enough that the rerun costs the
    # suite little CPU (each run is three task runs, each shard and parent a
    # flow-run process).
    runs = {f"s{index:03d}": ("slow", 0.5) for index in range(24)}
    sweep = make_sweep(tmp_path / "slow", runs, cases=2)
    out = tmp_path / "out"
    request = {"sweep": str(sweep), "target": str(out), "shards": 2, "concurrency": 1,
               "chunk_size": 1}  # fmt: skip
    with worker(deployed, tmp_path / "w1.log"):
        with worker(deployed, tmp_path / "w2.log"):
            started = run_deployment(deployed, request, watch=False, deployment="grade-sweep/local")
            assert started.returncode == 0, started.stdout + started.stderr
            deadline = time.monotonic() + 180
            while len(list(out.glob("*/reward.txt"))) < 6:
                assert time.monotonic() < deadline, "the shards published nothing"
                time.sleep(0.2)
            # The second worker and its flow runs die here, mid-shard.
        time.sleep(2.0)
    done = {path.parent.name: path.read_bytes() for path in out.glob("*/grade.json")}
    assert 6 <= len(done) < len(runs)
    quicken(sweep, 0.05)
    with worker(deployed, tmp_path / "w3.log"), worker(deployed, tmp_path / "w4.log"):
        again = run_deployment(deployed, request, deployment="grade-sweep/local")
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "Graded" in again.stdout
    graded = {path.parent.name for path in out.glob("*/grade.json")}
    assert graded == set(runs)  # nothing lost
    for run, data in done.items():  # nothing graded twice
        assert (out / run / "grade.json").read_bytes() == data, run
