"""End to end, as an ops team runs it: ``prefect server start``, ``prefect
deploy --prefect-file infra/prefect.yaml --name local``, a process worker,
``prefect deployment run 'grade-run/local' -p request=... --watch``; a bad
request refused when the run is created; a worker killed mid-sweep, then the
flow run again: every run graded once, nothing lost."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from .deployment import deployed, run_deployment, worker
from .sweeps import make_sweep, published

__all__ = ["deployed"]  # the fixture, shared with the other deployment tests

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("prefect-deployment")]


def test_deployed_grade_run_end_to_end(deployed: dict[str, str], tmp_path: Path) -> None:
    # One test, in sequence: a single worker polls the pool at any time, so
    # the worker killed below is the one running the flow run.
    grades_the_sweep_and_refuses_a_bad_request(deployed, tmp_path / "first")
    a_worker_killed_mid_sweep_then_a_rerun_grades_every_run_once(deployed, tmp_path / "second")


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

    # Refused when the run is created: both sweep and runs, a bound, neither.
    for bad in (
        {"sweep": str(sweep), "runs": [str(sweep / "r1")]},
        {"sweep": str(sweep), "max_attempts": 0},
        {"target": str(out)},
    ):
        refused = run_deployment(deployed, bad, watch=False)
        assert refused.returncode != 0, bad
        assert "Error creating flow run" in refused.stdout + refused.stderr, bad


def a_worker_killed_mid_sweep_then_a_rerun_grades_every_run_once(
    deployed: dict[str, str], tmp_path: Path
) -> None:
    tmp_path.mkdir(parents=True, exist_ok=True)
    runs = {f"run-{index:02d}": ("slow", 0.25) for index in range(24)}
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
