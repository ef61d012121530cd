"""What Harbor 0.26 makes of the files we publish, by Harbor's own code.

Each run is graded and published with truereward into a directory, then a real
Harbor job (``tests/support/harbor.py``: Harbor's ``Job``, trial and ``Verifier`` in a
stand-in sandbox, in a Python 3.12 venv of its own) takes that directory as
what the verifier left in ``/logs/verifier``. The job's figures are Harbor's
default metric (one ``Mean``) and its pass@k.

Harbor reads ``reward.json`` first (a flat object of finite numbers), else
``reward.txt`` (``float(text)``, as ``{"reward": x}``); with neither the trial
has no reward (``RewardFileNotFoundError``) and is left out of the job's
figures. ``Mean`` over rewards of one key is named ``mean``; over several keys
it gives one mean per key, named after the key. pass@k needs every trial's
rewards to be exactly one key valued 0 or 1, and at least 2 trials per task.

``reward.json`` is ``{"reward": x}`` alone by default, so the job's mean is
``mean`` and pass@k is computed; a grade published with ``reward_keys`` adds
figures, and then Harbor gives one mean per key and no pass@k (the opt-in
multi-metric mode).
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

import truereward as tr
from tests.support import harbor as harbor_support
from tests.support.harbor import (
    HarborUnavailable,
    JobMetrics,
    Trial,
    harbor_metrics,
    harbor_python,
    harbor_reward,
)
from tests.support.installs import make_venv
from truereward.grade.document import GradeDocument

pytestmark = pytest.mark.slow

FIX = "tests/test_app.py::test_fix"
GUARD = "tests/test_app.py::test_guard"
CASE_SET = {FIX: "fail_to_pass", GUARD: "pass_to_pass"}

#: The runs of the job: (task, kind), the ungradable one among them.
JOB = [
    ("task-a", "passing"),
    ("task-a", "failing"),
    ("task-a", "ungradable"),
    ("task-b", "failing"),
    ("task-b", "failing"),
    ("task-b", "passing"),
]


def run_rows(kind: str) -> list[dict[str, Any]]:
    """The rows of a passing, failing or ungradable run."""
    guard = {"id": GUARD, "kind": "pass_to_pass", "verdict": "pass"}
    if kind == "passing":
        return [{"id": FIX, "kind": "fail_to_pass", "verdict": "pass"}, guard]
    if kind == "failing":
        return [{"id": FIX, "kind": "fail_to_pass", "verdict": "fail"}, guard]
    assert kind == "ungradable"
    return [
        {
            "id": FIX,
            "kind": "fail_to_pass",
            "verdict": "ungradable",
            "code": "CASE_NOT_GRADED",
            "why": "the reader crashed",
        },
        guard,
    ]


def publish_run(directory: Path, kind: str, run_id: str) -> GradeDocument:
    document = tr.grade_document(run_rows(kind), case_set=CASE_SET, run={"id": run_id})
    tr.publish(document, directory)
    return document


def published_rewards(directory: Path) -> dict[str, Any]:
    return dict(json.loads((directory / "reward.json").read_text()))


@pytest.fixture(scope="module")
def harbor() -> Path:
    """Harbor's venv, made or reused; fails (never skips) without Python 3.12."""
    return harbor_python()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One published logs directory per kind of run."""
    root = tmp_path_factory.mktemp("runs")
    out = {}
    for kind in ("passing", "failing", "ungradable"):
        publish_run(root / kind, kind, f"run-{kind}")
        out[kind] = root / kind
    return out


@pytest.fixture(scope="module")
def parsed(harbor: Path, runs: dict[str, Path]) -> dict[str, Trial]:
    """Harbor's trial for each run. The failing verifier exits 1 (Harbor
    ignores the code); the ungradable run's sandbox holds stale reward files of
    1.0 from an earlier attempt (Harbor removes both before its verifier)."""
    return {
        "passing": harbor_reward(runs["passing"]),
        "failing": harbor_reward(runs["failing"], exit_code=1),
        "ungradable": harbor_reward(runs["ungradable"], stale=True),
    }


@pytest.fixture(scope="module")
def job(harbor: Path, tmp_path_factory: pytest.TempPathFactory) -> JobMetrics:
    """Harbor's figures over :data:`JOB`: 6 trials of 2 tasks."""
    root = tmp_path_factory.mktemp("job")
    trials: dict[str, list[Path]] = {}
    for index, (task, kind) in enumerate(JOB):
        directory = root / f"{index}-{task}-{kind}"
        publish_run(directory, kind, f"run-{index}")
        trials.setdefault(task, []).append(directory)
    return harbor_metrics(trials)


def pass_at_k(outcomes: list[int], k: int) -> float:
    """The unbiased pass@k of one task from n trials with c passes."""
    n, c = len(outcomes), sum(outcomes)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


#: Over the gradable trials of :data:`JOB`: task-a passes 1 of 2, task-b 1 of 3.
JOB_MEAN = 2 / 5
JOB_PASS_AT_2 = (pass_at_k([1, 0], 2) + pass_at_k([0, 0, 1], 2)) / 2


# --- what Harbor parses per trial --------------------------------------------------------------


def test_harbor_reads_the_passing_run_as_published(
    parsed: dict[str, Trial], runs: dict[str, Path]
) -> None:
    trial = parsed["passing"]
    assert trial["exception"] is None and trial["reward_valid"] is True
    assert trial["rewards"] == published_rewards(runs["passing"])
    assert trial["rewards"]["reward"] == 1.0


def test_harbor_reads_the_failing_run_as_published_whatever_the_exit_code(
    parsed: dict[str, Trial], runs: dict[str, Path]
) -> None:
    trial = parsed["failing"]
    assert trial["exception"] is None and trial["reward_valid"] is True
    assert trial["rewards"] == published_rewards(runs["failing"])
    assert trial["rewards"]["reward"] == 0.0


def test_an_ungradable_run_gives_harbor_no_reward(
    parsed: dict[str, Trial], runs: dict[str, Path]
) -> None:
    assert not (runs["ungradable"] / "reward.json").exists()
    assert not (runs["ungradable"] / "reward.txt").exists()
    trial = parsed["ungradable"]
    assert trial["rewards"] is None  # no reward, not 0 (and not the stale 1.0)
    assert trial["reward_valid"] is False
    assert trial["exception"] == "RewardFileNotFoundError"


@pytest.mark.parametrize(("kind", "reward"), [("passing", 1.0), ("failing", 0.0)])
def test_reward_txt_alone_is_the_same_reward(
    harbor: Path, runs: dict[str, Path], tmp_path: Path, kind: str, reward: float
) -> None:
    """Without reward.json Harbor reads reward.txt, as ``{"reward": float(text)}``."""
    alone = tmp_path / kind
    shutil.copytree(runs[kind], alone)
    (alone / "reward.json").unlink()
    trial = harbor_reward(alone)
    assert trial["exception"] is None
    assert trial["rewards"] == {"reward": reward}


# --- what Harbor computes over a job ------------------------------------------------------------


def test_the_job_leaves_the_ungradable_trial_out(job: JobMetrics) -> None:
    assert job["n_trials"] == 5 and job["n_errors"] == 1
    ungradable = job["trials"][JOB.index(("task-a", "ungradable"))]
    assert ungradable["rewards"] is None and ungradable["exception"] == "RewardFileNotFoundError"
    for (_task, kind), trial in zip(JOB, job["trials"], strict=True):
        if kind != "ungradable":
            assert trial["reward_valid"] and trial["rewards"] is not None
            assert trial["rewards"]["reward"] == (1.0 if kind == "passing" else 0.0)


def test_the_job_has_a_mean_named_mean_and_pass_at_k(job: JobMetrics) -> None:
    """One key per trial: Harbor's ``Mean`` is ``mean`` over the valid trials
    only (2 of 5, not 2 of 6) and pass@k is computed."""
    rewards = [trial["rewards"] for trial in job["trials"] if trial["rewards"] is not None]
    assert {key for reward in rewards for key in reward} == {"reward"}
    assert job["metrics"] == [{"mean": pytest.approx(JOB_MEAN)}]
    assert job["pass_at_k"] == {2: pytest.approx(JOB_PASS_AT_2)}


def test_reward_keys_switch_harbor_to_one_mean_per_key_and_no_pass_at_k(
    harbor: Path, tmp_path: Path
) -> None:
    """The opt-in multi-metric mode: every trial's reward.json has the named
    figures too; Harbor names a mean after each key and computes no pass@k."""
    trials: dict[str, list[Path]] = {"task": []}
    for index, verdict in enumerate(("pass", "fail", "pass")):
        rows = [
            {"id": FIX, "kind": "fail_to_pass", "verdict": verdict},
            {"id": GUARD, "kind": "pass_to_pass", "verdict": "pass"},
        ]
        document = tr.grade_document(
            rows,
            case_set=CASE_SET,
            run={"id": f"run-{index}"},
            publication={"reward_keys": ["fix_rate", "guards_hold"]},
        )
        tr.publish(document, tmp_path / str(index))
        trials["task"].append(tmp_path / str(index))
    job = harbor_metrics(trials)
    assert job["metrics"] == [
        {
            "reward": pytest.approx(2 / 3),
            "fix_rate": pytest.approx(2 / 3),
            "guards_hold": pytest.approx(1.0),
        }
    ]
    assert job["pass_at_k"] == {}


def test_published_dimensions_switch_harbor_to_a_mean_per_key_and_no_pass_at_k(
    harbor: Path, tmp_path: Path
) -> None:
    """A task with named dimensions publishes the ones it asks for beside
    ``reward`` (the primary): Harbor then reads every key (the same flat
    object), names a mean after each, and computes no pass@k. Without
    ``publish``, the same grades give ``{"reward": x}`` alone, and pass@k."""
    spec = {
        "cases": [{"id": "build", "kind": "fail_to_pass"}, {"id": "style", "kind": "fail_to_pass"}],
        "scoring": {
            "dimensions": [
                {"name": "style", "scheme": "all-pass/1", "cases": ["style"]},
                {
                    "name": "reward",
                    "scheme": "all-pass/1",
                    "cases": ["build"],
                    "dimensions": ["style"],
                },
            ],
            "publish": ["style"],
        },
    }
    plain = {**spec, "scoring": {**spec["scoring"], "publish": []}}
    for name, task in (("dims", spec), ("alone", plain)):
        trials: dict[str, list[Path]] = {"task": []}
        for index, style in enumerate(("pass", "fail", "pass")):
            rows = [
                {"id": "build", "kind": "fail_to_pass", "verdict": "pass"},
                {"id": "style", "kind": "fail_to_pass", "verdict": style},
            ]
            document = tr.grade_document(rows, case_set=task, run={"id": f"run-{index}"})
            assert document.gradable, document.refusals
            tr.publish(document, tmp_path / name / str(index))
            trials["task"].append(tmp_path / name / str(index))
        job = harbor_metrics(trials)
        assert all(trial["exception"] is None for trial in job["trials"]), [
            (trial["exception"], trial["message"]) for trial in job["trials"]
        ]
        if name == "dims":
            assert [trial["rewards"] for trial in job["trials"]] == [
                {"reward": 1.0, "style": 1.0},
                {"reward": 0.0, "style": 0.0},
                {"reward": 1.0, "style": 1.0},
            ]
            assert job["metrics"] == [
                {"reward": pytest.approx(2 / 3), "style": pytest.approx(2 / 3)}
            ]
            assert job["pass_at_k"] == {}
        else:
            assert job["metrics"] == [{"mean": pytest.approx(2 / 3)}]
            assert job["pass_at_k"] == {2: pytest.approx(1.0)}


def test_a_fractional_reward_has_a_mean_but_no_pass_at_k(harbor: Path, tmp_path: Path) -> None:
    """pass@k takes rewards of exactly 0 or 1: a fix-rate/1 reward of 0.5 turns
    it off for the whole job, whatever the keys."""
    rows = [
        {"id": "a", "kind": "fail_to_pass", "verdict": "pass"},
        {"id": "b", "kind": "fail_to_pass", "verdict": "fail"},
    ]
    trials: dict[str, list[Path]] = {"task": []}
    for index, verdicts in enumerate((rows, [dict(rows[0]), {**rows[1], "verdict": "pass"}])):
        document = tr.grade_document(verdicts, scheme="fix-rate/1", run={"id": f"run-{index}"})
        tr.publish(document, tmp_path / str(index))
        trials["task"].append(tmp_path / str(index))
    job = harbor_metrics(trials)
    assert [trial["rewards"]["reward"] for trial in job["trials"] if trial["rewards"]] == [0.5, 1.0]
    assert job["pass_at_k"] == {}


def test_the_passing_and_failing_runs_are_reward_alone(parsed: dict[str, Trial]) -> None:
    assert parsed["passing"]["rewards"] == {"reward": 1.0}
    assert parsed["failing"]["rewards"] == {"reward": 0.0}


# --- the support module fails loudly -----------------------------------------------------------


def test_no_python_312_is_an_error_naming_what_was_tried(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TRUEREWARD_PYTHON312", sys.executable)  # this one is 3.11
    monkeypatch.setattr(harbor_support, "PYENV_GLOB", str(tmp_path / "none" / "*" / "python"))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(HarborUnavailable, match="none was found") as raised:
        harbor_support.find_python312()
    assert sys.executable in str(raised.value)


def test_a_failed_install_is_an_error_with_the_installers_output(tmp_path: Path) -> None:
    with pytest.raises(HarborUnavailable, match="exit") as raised:
        make_venv(
            tmp_path / "venv",
            sys.executable,
            ["harbor==!!"],
            error=HarborUnavailable,
            timeout=300,
        )
    assert "harbor==!!" in str(raised.value)
    assert "--- stderr" in str(raised.value)
