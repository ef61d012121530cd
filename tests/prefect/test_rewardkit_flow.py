"""The grade-run flow with the rewardkit bridge and with weighted, named
rewards, against a real Prefect server: readers and schemes from the
registries, like any other, and a stored run that never chooses what the
grader executes."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.support.rewardkit import rewardkit_python
from tests.support.sweeps import published, run_flow
from truereward.verify import verify_published

pytestmark = pytest.mark.slow

CHECKS = (
    "from rewardkit import criteria\n"
    "criteria.file_exists('out.txt', weight=3)\n"
    "criteria.file_contains('out.txt', 'hello')\n"
)


def test_the_bridge_grades_a_sweep_in_the_flow(
    prefect_client_settings: str, tmp_path: Path
) -> None:
    kit = rewardkit_python()
    tests = tmp_path / "task" / "tests"
    tests.mkdir(parents=True)
    (tests / "checks.py").write_text(CHECKS)
    sweep = tmp_path / "sweep"
    for run, text in (("run-pass", "hello\n"), ("run-fail", "bye\n")):
        (sweep / run / "workspace").mkdir(parents=True)
        (sweep / run / "workspace" / "out.txt").write_text(text)
    (sweep / "run-gone").mkdir()  # no workspace
    out = tmp_path / "out"
    state = run_flow(
        sweep=str(sweep),
        target=str(out),
        reader="rewardkit",
        case_set={"cases": []},
        options={"python": str(kit), "tests": str(tests)},
        max_attempts=1,
    )
    assert state.is_completed()
    found = published(out)
    assert found["run-pass"]["grade"]["reward"] == 1.0
    assert found["run-fail"]["grade"]["reward"] == 0.75  # weighted 3:1, as rewardkit
    assert found["run-pass"]["files"] == [
        "ctrf.json",
        "grade.json",
        "reward-details.json",
        "reward.json",
        "reward.txt",
    ]
    gone = found["run-gone"]["grade"]
    assert not gone["gradable"] and [item["code"] for item in gone["refusals"]] == [
        "WORKSPACE_MISSING"
    ]
    for run in ("run-pass", "run-fail", "run-gone"):
        assert verify_published(out / run)[1] == []


def test_a_run_whose_spec_names_the_interpreter_is_refused(
    prefect_client_settings: str, tmp_path: Path
) -> None:
    planted = tmp_path / "planted"
    planted.write_text(f"#!/bin/sh\ntouch {tmp_path / 'ran'}\n")
    planted.chmod(planted.stat().st_mode | stat.S_IEXEC)
    sweep = tmp_path / "sweep"
    (sweep / "run-1" / "workspace" / "tests").mkdir(parents=True)
    (sweep / "run-1" / "task.json").write_text(
        json.dumps(
            {
                "cases": [],
                "reader": "rewardkit",
                "options": {"python": str(planted), "tests": "/tmp"},
            }
        )
    )
    out = tmp_path / "out"
    state = run_flow(sweep=str(sweep), target=str(out), max_attempts=1)
    assert state.is_completed()
    grade = published(out)["run-1"]["grade"]
    assert [item["code"] for item in grade["refusals"]] == ["CASE_INVALID"]
    assert "never the run's task spec" in grade["refusals"][0]["why"]
    assert not (tmp_path / "ran").exists()


def test_weighted_dimensions_in_the_flow(prefect_client_settings: str, tmp_path: Path) -> None:
    spec = {
        "reader": "rows",
        "evidence": "rows.jsonl",
        "cases": [
            {"id": "build", "kind": "fail_to_pass", "weight": 2},
            {"id": "lint", "kind": "fail_to_pass"},
        ],
        "scoring": {
            "dimensions": [
                {"name": "lint", "scheme": "all-pass/1", "cases": ["lint"]},
                {
                    "name": "reward",
                    "scheme": "weighted-mean/1",
                    "cases": ["build"],
                    "dimensions": ["lint"],
                },
            ],
            "publish": ["lint"],
        },
    }
    sweep = tmp_path / "sweep"
    for run, lint in (("run-a", "pass"), ("run-b", "fail")):
        (sweep / run).mkdir(parents=True)
        (sweep / run / "task.json").write_text(json.dumps(spec))
        rows = [
            {"id": "build", "kind": "fail_to_pass", "verdict": "pass"},
            {"id": "lint", "kind": "fail_to_pass", "verdict": lint},
        ]
        (sweep / run / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "out"
    state = run_flow(sweep=str(sweep), target=str(out), max_attempts=1)
    assert state.is_completed()
    found = published(out)
    assert json.loads((out / "run-a" / "reward.json").read_text()) == {"reward": 1.0, "lint": 1.0}
    assert json.loads((out / "run-b" / "reward.json").read_text()) == {
        "reward": pytest.approx(2 / 3),
        "lint": 0.0,
    }
    assert found["run-b"]["grade"]["scheme"] == "weighted-mean/1"
    assert found["run-b"]["grade"]["schema_version"] == 4
    assert "reward-details.json" in found["run-b"]["files"]
    for run in ("run-a", "run-b"):
        assert verify_published(out / run)[1] == []
