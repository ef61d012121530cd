"""A flow process killed mid-sweep on S3, with requests overlapped, then run
again: every run graded exactly once, and nothing left for
``truereward verify --repair`` to repair.

The sweep and its grades lie in moto's server behind a latency proxy (a
process of its own, 40 ms a request: a sweep long enough to be killed in
the middle of it); the flow is ``python flows/grade_run.py --request ...``
on the session's Prefect server, with grade-run's default I/O budget for
object stores, so dozens of reads and publishes are in flight when the
process is killed with SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.latencyproxy import LatencyProxy
from tests.support.server import offline_env
from tests.support.sweeps import make_sweep
from truereward import GradeDocument

ROOT = Path(__file__).resolve().parents[2]
RUNS = 160
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


def grades(client: Any, bucket: str) -> dict[str, bytes]:
    """Every grade.json under graded/, by run."""
    found: dict[str, bytes] = {}
    pages = client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="graded/")
    for page in pages:
        for item in page.get("Contents", []):
            key = item["Key"]
            if key.endswith("/grade.json"):
                body = client.get_object(Bucket=bucket, Key=key)["Body"].read()
                found[key.split("/")[1]] = body
    return found


def listed(client: Any, bucket: str) -> int:
    """How many grade.json objects stand under graded/ (one LIST)."""
    page = client.list_objects_v2(Bucket=bucket, Prefix="graded/")
    return sum(item["Key"].endswith("/grade.json") for item in page.get("Contents", []))


def flow(request: dict[str, Any], api: str) -> subprocess.Popen[str]:
    env = offline_env(PREFECT_API_URL=api, **CREDENTIALS)
    return subprocess.Popen(
        [sys.executable, "flows/grade_run.py", "--request", json.dumps(request)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


@pytest.mark.slow
def test_killed_mid_sweep_on_s3_then_every_run_is_graded_once(
    prefect_api: str, s3_endpoint: str, s3_client: Any, bucket: str, tmp_path: Path
) -> None:
    local = make_sweep(tmp_path / "sweep", {f"run-{index:03d}": "pass" for index in range(RUNS)})
    for path in sorted(local.rglob("*")):
        if path.is_file():
            key = f"sweep/{path.relative_to(local).as_posix()}"
            s3_client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
    with LatencyProxy(s3_endpoint, 0.04) as proxy:
        request = {
            "sweep": f"s3://{bucket}/sweep",
            "target": f"s3://{bucket}/graded",
            "storage_options": {
                "endpoint_url": proxy.url,
                "client_kwargs": {"region_name": "us-east-1"},
            },
            "report": str(tmp_path / "report.html"),
        }
        first = flow(request, prefect_api)
        deadline = time.monotonic() + 240
        while listed(s3_client, bucket) < RUNS // 4:  # one LIST a poll: quick
            assert first.poll() is None, first.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "the first flow run published nothing"
            time.sleep(0.05)
        os.killpg(first.pid, signal.SIGKILL)  # the flow and anything it started
        first.wait()
        time.sleep(1.0)  # what was in flight has landed or never will
        before = grades(s3_client, bucket)
        assert RUNS // 4 <= len(before) < RUNS, len(before)

        second = flow(request, prefect_api)
        output = second.communicate(timeout=600)[0]
        assert second.returncode == 0, output[-3000:]

    after = grades(s3_client, bucket)
    assert sorted(after) == sorted(path.name for path in local.iterdir())
    for run, data in after.items():
        grade = GradeDocument.from_bytes(data)
        # Graded once: the first attempt, no earlier attempt recorded.
        assert grade.run is not None and grade.run.attempt == 1 and grade.attempts == (), run
    for run, data in before.items():
        assert after[run] == data, run  # a grade published before the kill was kept
    verified = subprocess.run(
        [
            str(Path(sys.executable).with_name("truereward")),
            "verify",
            "--repair",
            f"s3://{bucket}/graded",
            "--storage-option",
            f"endpoint_url={s3_endpoint}",
        ],
        env={**offline_env(), **CREDENTIALS},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "repaired:" not in verified.stdout, verified.stdout
    assert f"{RUNS} runs" in verified.stdout and f"{RUNS} consistent" in verified.stdout
