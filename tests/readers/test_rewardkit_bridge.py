"""The rewardkit bridge against real harbor-rewardkit 0.2.3 in a Python 3.12
venv (``tests/support/rewardkit.py``, shared with the parity corpus: made and cached
like Harbor's, never skipped).

Each of rewardkit's failures is reproduced twice: by rewardkit itself (its
command line, as a task's ``test.sh`` runs it: what it writes, what it
exits with) and through the bridge (no reward, the code and blame, nothing
stale read). A passing and a failing task grade to rewardkit's own score.
The bridge's own handling of what a killed or broken rewardkit leaves is
shown with stand-in interpreters (shell scripts in the place of ``python``),
which cost no rewardkit run. rewardkit's runs come from a zygote that has
imported it once (``tests/support/kitzygote.py``); the real interpreter
runs end to end in ``tests/prefect/test_rewardkit_flow.py``.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import truereward as tr
from tests.support.kitzygote import rewardkit_zygote
from tests.support.llm_stub import StubLLM
from tests.support.rewardkit import REWARDKIT_VERSION, rewardkit_python, side_by_side
from truereward.grade.document import GradeDocument
from truereward.grade.files import render as render_files
from truereward.verify import verify_published

pytestmark = pytest.mark.slow

#: litellm otherwise fetches its cost map from the network when imported.
QUIET = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}


@pytest.fixture(scope="module")
def kit() -> Path:
    """The interpreter harbor-rewardkit 0.2.3 is installed in, as this
    worker's zygote serves it (its ``rewardkit`` command beside it): each
    run is rewardkit's own code without paying litellm's import again
    (``tests/support/kitzygote.py``)."""
    return rewardkit_zygote().python


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary directory the bridge makes its output directories in,
    so that a test sees every one it made."""
    where = tmp_path / "scratch"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


def write(root: Path, files: Mapping[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def task(
    tmp_path: Path, tests: Mapping[str, str], app: Mapping[str, str] | None = None
) -> tuple[Path, Path]:
    """A rewardkit layout and a workspace."""
    return (
        write(tmp_path / "tests", tests),
        write(tmp_path / "app", {"out.txt": "hello\n"} if app is None else app),
    )


def rewardkit_itself(
    kit: Path, tests: Path, workspace: Path, logs: Path, env: Mapping[str, str] | None = None
) -> tuple[int, dict[str, Any] | None, str]:
    """rewardkit's command line into ``logs`` (as a task's test.sh runs it):
    its exit status, the reward.json it left there (``None``: none) and its
    standard error."""
    logs.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            str(kit.parent / "rewardkit"),
            str(tests),
            "--workspace",
            str(workspace),
            "--output",
            str(logs / "reward.json"),
        ],
        env={**os.environ, **QUIET, **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    reward = logs / "reward.json"
    return (
        done.returncode,
        (json.loads(reward.read_text()) if reward.exists() else None),
        done.stderr,
    )


def bridge(
    kit: Path | str,
    tests: Path,
    workspace: Path,
    *,
    spec: Mapping[str, Any] | None = None,
    **options: Any,
) -> GradeDocument:
    """The grade the bridge gives (``truereward.grade_evidence``, as the command line does)."""
    given = {"python": str(kit), "tests": str(tests), **options}
    return tr.grade_evidence(
        "rewardkit", str(workspace), {"cases": [], **(spec or {}), "options": given}
    )


def refused(document: GradeDocument) -> list[tuple[str, str, str | None]]:
    return sorted((item.code, item.blame.value, item.case) for item in document.refusals)


def no_reward(document: GradeDocument) -> None:
    assert not document.gradable and document.reward is None
    assert "reward.json" not in render_files(document)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- graded to rewardkit's own score -------------------------------------------------------

LAYOUT = {
    "correctness/checks.py": (
        "from rewardkit import criteria\n"
        "criteria.file_exists('out.txt', weight=2.0)\n"
        "criteria.file_contains('out.txt', 'hello')\n"
        "criteria.diff_ratio('out.txt', 'hello\\n')\n"
        "criteria.json_key_equals('data.json', 'status', 'ok')\n"
    ),
    "correctness/unit/more.py": (
        "from rewardkit import criteria\n"
        "criteria.file_contains('out.txt', 'hel', weight=3)\n"
        "criteria.file_not_exists('junk.txt')\n"
    ),
    "correctness/reward.toml": (
        "[[reward]]\naggregation = 'weighted-mean'\nweights = { checks = 1.0, unit = 2.0 }\n"
    ),
    "style/files.py": "from rewardkit import criteria\ncriteria.file_exists('README.md')\n",
    "reward.toml": (
        "[[reward]]\nname = 'reward'\naggregation = 'weighted-mean'\n"
        "weights = { correctness = 2.0, style = 1.0 }\n"
        "[[reward]]\nname = 'strict'\naggregation = 'all-pass'\n"
        "[[reward]]\nname = 'bar'\naggregation = 'threshold'\nthreshold = 0.7\n"
    ),
}
PASSING = {"out.txt": "hello\n", "data.json": '{"status": "ok"}', "README.md": "# done\n"}
FAILING = {"out.txt": "goodbye\n", "data.json": '{"status": "no"}', "junk.txt": "x"}


@pytest.mark.parametrize(
    ("app", "passes"), [(PASSING, True), (FAILING, False)], ids=["passing", "failing"]
)
def test_a_task_grades_to_rewardkits_own_score(
    kit: Path, tmp_path: Path, scratch: Path, app: dict[str, str], passes: bool
) -> None:
    tests, workspace = task(tmp_path, LAYOUT, app)
    status, theirs, _ = rewardkit_itself(kit, tests, workspace, tmp_path / "rk")
    assert status == 0 and theirs is not None
    document = bridge(kit, tests, workspace, publish="all")
    assert document.gradable, refused(document)
    ours = {
        "reward": document.reward,
        **{key: document.dimensions[key] for key in theirs if key != "reward"},
    }
    assert ours == theirs  # every reward rewardkit writes, to the last digit it writes
    assert (theirs["reward"] == 1.0) is passes and (theirs["strict"] == 1.0) is passes
    assert document.scheme == "weighted-mean/1"
    published = render_files(document)
    assert json.loads(published["reward.json"]) == theirs
    details = json.loads(published["reward-details.json"])
    assert set(details) == set(theirs) and details["reward"]["kind"] == "group"
    # Graded again from the document alone, and published whole.
    tr.publish(document, tmp_path / "logs")
    again, disagreements = verify_published(tmp_path / "logs")
    assert disagreements == [] and again.digest == document.digest
    assert list(scratch.iterdir()) == []  # the output directory went with the attempt


def test_only_the_primary_is_published_unless_the_task_asks(kit: Path, tmp_path: Path) -> None:
    tests, workspace = task(tmp_path, LAYOUT, PASSING)
    document = bridge(kit, tests, workspace)
    assert json.loads(render_files(document)["reward.json"]) == {"reward": 1.0}
    strict = bridge(kit, tests, workspace, primary="strict", publish=["bar"])
    assert json.loads(render_files(strict)["reward.json"]) == {"reward": 1.0, "bar": 1.0}
    assert strict.scheme == "all-pass/1"
    # "all" with another primary: rewardkit's own "reward" cannot be a key of ours.
    every = bridge(kit, tests, workspace, primary="bar", publish="all")
    assert set(json.loads(render_files(every)["reward.json"])) == {
        "reward",
        "correctness",
        "style",
        "strict",
    }


# --- rewardkit's failures, reproduced and refused -------------------------------------------


def test_a_judge_that_times_out(kit: Path, tmp_path: Path) -> None:
    tests, workspace = task(
        tmp_path,
        {
            "checks.py": "from rewardkit import criteria\ncriteria.file_exists('out.txt')\n",
            "quality.toml": (
                "[judge]\njudge = 'openai/stub-model'\ntimeout = 1\n"
                "[[criterion]]\ndescription = 'Is the output correct?'\ntype = 'binary'\n"
            ),
        },
    )
    with StubLLM("hang") as stub:
        env = {"OPENAI_BASE_URL": stub.base_url, "OPENAI_API_KEY": "stub"}
        (status, theirs, _), document = side_by_side(
            lambda: rewardkit_itself(kit, tests, workspace, tmp_path / "rk", env),
            lambda: bridge(kit, tests, workspace, env=env),
        )
        assert (status, theirs) == (0, {"reward": 0.5})  # the timed-out judge scored 0.0
        assert stub.requests >= 2  # the judge was asked, by rewardkit and by the bridge's rewardkit
    no_reward(document)
    assert refused(document) == [("PROVIDER_FAILED", "grader", "quality::is_the_output_correct")]
    assert "judge timed out after 1s" in document.refusals[0].why
    assert document.dimensions["tests/checks"] == 1.0  # what was measured is still said


def test_a_judge_that_cannot_connect(kit: Path, tmp_path: Path) -> None:
    tests, workspace = task(
        tmp_path,
        {
            "quality.toml": (
                "[judge]\njudge = 'openai/stub-model'\ntimeout = 5\n"
                "[[criterion]]\ndescription = 'Is it right?'\n"
            )
        },
    )
    env = {"OPENAI_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1", "OPENAI_API_KEY": "stub"}
    stale = {"reward": 1.0}
    (tmp_path / "rk").mkdir()
    (tmp_path / "rk" / "reward.json").write_text(json.dumps(stale))
    (status, theirs, _), document = side_by_side(
        lambda: rewardkit_itself(kit, tests, workspace, tmp_path / "rk", env),
        lambda: bridge(kit, tests, workspace, env=env),
    )
    assert status == 1 and theirs == stale  # exits 1, writes nothing: the old reward stands
    no_reward(document)
    assert refused(document) == [("REWARDKIT_FAILED", "grader", None)]
    assert "exited 1" in document.refusals[0].why


def test_a_command_that_times_out(kit: Path, tmp_path: Path) -> None:
    tests, workspace = task(
        tmp_path,
        {
            "checks.py": (
                "from rewardkit import criteria\ncriteria.file_exists('out.txt')\n"
                "criteria.command_succeeds('sleep 30', timeout=1)\n"
            )
        },
    )
    (status, theirs, _), document = side_by_side(
        lambda: rewardkit_itself(kit, tests, workspace, tmp_path / "rk"),
        lambda: bridge(kit, tests, workspace),
    )
    assert (status, theirs) == (0, {"reward": 0.5})
    no_reward(document)
    assert refused(document) == [("GRADER_TIMEOUT", "grader", "checks::command_succeeds:sleep 30")]
    assert "did not end within 1 s" in document.refusals[0].why


def test_an_http_request_that_raises(kit: Path, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/health"
    tests, workspace = task(
        tmp_path,
        {
            "checks.py": (
                "from rewardkit import criteria\ncriteria.file_exists('out.txt')\n"
                f"criteria.http_status_equals({url!r})\n"
                f"criteria.http_response_contains({url!r}, 'ok')\n"
            )
        },
    )
    status, theirs, _ = rewardkit_itself(kit, tests, workspace, tmp_path / "rk")
    assert (status, theirs) == (0, {"reward": 0.3333})
    document = bridge(kit, tests, workspace)
    no_reward(document)
    assert refused(document) == [
        ("SERVICE_UNREACHABLE", "grader", f"checks::http_response_contains:{url}"),
        ("SERVICE_UNREACHABLE", "grader", f"checks::http_status_equals:{url}"),
    ]


def test_a_missing_trajectory(kit: Path, tmp_path: Path) -> None:
    trajectory = tmp_path / "agent" / "trajectory.json"
    tests, workspace = task(
        tmp_path,
        {
            "agent.py": (
                "from rewardkit import criteria\n"
                f"criteria.trajectory_turn_count(5, path={str(trajectory)!r})\n"
                f"criteria.trajectory_tool_not_used('rm', path={str(trajectory)!r})\n"
            )
        },
    )
    status, theirs, _ = rewardkit_itself(kit, tests, workspace, tmp_path / "rk")
    assert (status, theirs) == (0, {"reward": 0.0})
    document = bridge(kit, tests, workspace)
    no_reward(document)
    assert {code for code, _, _ in refused(document)} == {"TRAJECTORY_MISSING"}
    assert len(document.refusals) == 2
    trajectory.parent.mkdir()
    trajectory.write_text("not json")
    malformed = bridge(kit, tests, workspace)
    assert {code for code, _, _ in refused(malformed)} == {"TRAJECTORY_MALFORMED"}


def test_a_missing_workspace(kit: Path, tmp_path: Path, scratch: Path) -> None:
    tests, _ = task(
        tmp_path,
        {"checks.py": "from rewardkit import criteria\ncriteria.file_not_exists('out.txt')\n"},
    )
    gone = tmp_path / "no-such-app"
    status, theirs, _ = rewardkit_itself(kit, tests, gone, tmp_path / "rk")
    assert (status, theirs) == (0, {"reward": 1.0})  # a missing workspace scores, here even 1
    document = bridge(kit, tests, gone)
    no_reward(document)
    assert refused(document) == [("WORKSPACE_MISSING", "grader", None)]
    assert list(scratch.iterdir()) == []  # rewardkit was not even started


def test_no_criteria(kit: Path, tmp_path: Path) -> None:
    tests, workspace = task(tmp_path, {"helpers.py": "VALUE = 1\n"})
    status, theirs, _ = rewardkit_itself(kit, tests, workspace, tmp_path / "rk")
    assert (status, theirs) == (0, {})
    document = bridge(kit, tests, workspace)
    no_reward(document)
    assert refused(document) == [("CASE_INVALID", "grader", None)]
    assert "no criteria" in document.refusals[0].why


def test_a_criterion_that_raises_and_the_stale_reward_it_leaves(kit: Path, tmp_path: Path) -> None:
    tests, workspace = task(
        tmp_path,
        {
            "checks.py": (
                "from rewardkit import criteria\nfrom rewardkit import criterion\n"
                "@criterion\ndef broken(workspace):\n    raise RuntimeError('the checker broke')\n"
                "criteria.file_exists('out.txt')\n"
            )
        },
    )
    logs = tmp_path / "logs"  # the verifier's logs, where a reward of 1.0 stands from before
    logs.mkdir()
    (logs / "reward.json").write_text('{"reward": 1.0}')
    (logs / "reward.txt").write_text("1.0\n")
    status, theirs, said = rewardkit_itself(kit, tests, workspace, logs)
    assert status == 1 and theirs == {"reward": 1.0} and "the checker broke" in said
    document = bridge(kit, tests, workspace)
    no_reward(document)
    assert refused(document) == [("REWARDKIT_FAILED", "grader", None)]
    assert "the checker broke" in document.refusals[0].why
    tr.publish(document, logs)  # the stale reward goes; no reward stands beside the refusal
    assert sorted(path.name for path in logs.iterdir()) == ["ctrf.json", "grade.json"]
    assert verify_published(logs)[1] == []


@pytest.mark.parametrize("value", [1.5, -3])
def test_values_outside_0_1(kit: Path, tmp_path: Path, value: float) -> None:
    tests, workspace = task(
        tmp_path,
        {
            "checks.py": (
                "from rewardkit import criteria\nfrom rewardkit import criterion\n"
                f"@criterion\ndef odd(workspace):\n    return {value}\n"
                "criteria.file_exists('out.txt')\n"
            )
        },
    )
    status, theirs, said = rewardkit_itself(kit, tests, workspace, tmp_path / "rk")
    assert (
        status == 0
        and theirs == {"reward": round((value + 1) / 2, 4)}
        and "will not be clamped" in said
    )
    document = bridge(kit, tests, workspace)
    no_reward(document)
    assert refused(document) == [("SCORE_OUT_OF_RANGE", "grader", "checks::odd")]
    assert document.detail[1].measures["score"] == value  # kept as measured, never clipped


def test_a_stale_reward_json_in_place_is_never_read(
    kit: Path, tmp_path: Path, scratch: Path
) -> None:
    """A reward.json from before, where rewardkit would write and in the
    workspace, says 1.0; the criterion fails: the bridge's grade is 0.0,
    read from the output directory it made for this attempt alone."""
    tests, workspace = task(
        tmp_path,
        {"checks.py": "from rewardkit import criteria\ncriteria.file_contains('out.txt', 'no')\n"},
        {"out.txt": "hello\n", "reward.json": '{"reward": 1.0}', "reward-details.json": "{}"},
    )
    logs = tmp_path / "logs"
    write(logs, {"reward.json": '{"reward": 1.0}', "reward-details.json": "{}"})
    document = bridge(kit, tests, workspace)
    assert document.gradable and document.reward == 0.0
    assert list(scratch.iterdir()) == []
    assert document.evidence == ()  # nothing of the run's read as rewardkit's output


# --- what a killed or broken rewardkit leaves (stand-in interpreters) -------------------------


def stand_in(tmp_path: Path, body: str) -> Path:
    """An executable in the place of the task's python: ``$5`` is the output
    directory the bridge made (``$1`` -I, ``$2`` the probe, ``$3`` tests,
    ``$4`` the workspace)."""
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_a_partial_output_is_refused(tmp_path: Path, scratch: Path) -> None:
    tests, workspace = task(tmp_path, {"checks.py": ""})
    only_reward = stand_in(tmp_path, 'printf \'{"reward": 1.0}\' > "$5/reward.json"\n')
    document = bridge(only_reward, tests, workspace)
    no_reward(document)
    assert refused(document) == [("REWARDKIT_FAILED", "grader", None)]
    assert "no reward-details.json" in document.refusals[0].why
    empty = stand_in(tmp_path, ': > "$5/reward.json"; : > "$5/reward-details.json"\n')
    assert "not JSON" in bridge(empty, tests, workspace).refusals[0].why
    killed = stand_in(tmp_path, 'printf \'{"reward": 1.0}\' > "$5/reward.json"; kill -9 $$\n')
    document = bridge(killed, tests, workspace)
    assert refused(document) == [("REWARDKIT_FAILED", "grader", None)]
    assert "signal 9" in document.refusals[0].why
    assert list(scratch.iterdir()) == []


def test_each_attempt_has_a_new_output_directory(tmp_path: Path) -> None:
    tests, workspace = task(tmp_path, {"checks.py": ""})
    seen = tmp_path / "seen.txt"
    recorder = stand_in(tmp_path, f'echo "$5" >> {seen}; ls -A "$5" >> {seen}; exit 1\n')
    for _ in range(2):
        assert refused(bridge(recorder, tests, workspace)) == [("REWARDKIT_FAILED", "grader", None)]
    first, second = seen.read_text().split()  # `ls -A` of each printed nothing: empty
    assert first != second
    assert not Path(first).exists() and not Path(second).exists()


def test_the_time_bound_kills_rewardkit_and_what_it_started(tmp_path: Path) -> None:
    tests, workspace = task(tmp_path, {"checks.py": ""})
    pid_file = tmp_path / "child.pid"
    slow = stand_in(tmp_path, f"sleep 300 & echo $! > {pid_file}; sleep 300\n")
    started = time.monotonic()
    document = bridge(slow, tests, workspace, timeout=2)
    assert time.monotonic() - started < 30
    assert refused(document) == [("GRADER_TIMEOUT", "grader", None)]
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10  # SIGKILL is delivered, not instant, on a loaded machine
    while running(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not running(child)


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_an_interpreter_without_rewardkit(tmp_path: Path) -> None:
    import sys

    tests, workspace = task(tmp_path, {"checks.py": ""})
    missing = bridge(tmp_path / "no-such-python", tests, workspace)
    assert refused(missing) == [("TOOL_MISSING", "grader", None)]
    without = bridge(sys.executable, tests, workspace)  # truereward's venv: no rewardkit
    assert refused(without) == [("TOOL_MISSING", "grader", None)]
    assert "cannot be imported" in without.refusals[0].why


def test_a_stored_run_never_chooses_what_runs(tmp_path: Path) -> None:
    """Over a run of a sweep, a task spec inside the run may not name the
    interpreter or the tests: only the caller's options do."""
    from truereward.readers import Evidence, read_with_evidence

    run = tmp_path / "run-1"
    tests, workspace = task(run, {"checks.py": ""})
    planted = stand_in(tmp_path, f"touch {tmp_path / 'ran'}\n")
    spec = {"cases": [], "options": {"python": str(planted), "tests": str(tests)}}
    with pytest.raises(tr.Ungradable) as caught:
        read_with_evidence("rewardkit", Evidence(url=str(workspace), root=str(run)), spec)
    assert caught.value.code == "CASE_INVALID" and "never the run's task spec" in caught.value.why
    assert not (tmp_path / "ran").exists()
    with pytest.raises(tr.Ungradable) as given:  # the caller's options: it runs
        read_with_evidence(
            "rewardkit",
            Evidence(url=str(workspace), root=str(run)),
            {"cases": []},
            python=str(planted),
            tests=str(tests),
        )
    assert given.value.code == "REWARDKIT_FAILED" and (tmp_path / "ran").exists()


def test_a_spec_may_not_declare_a_scoring_beside_rewardkits(kit: Path, tmp_path: Path) -> None:
    tests, workspace = task(
        tmp_path, {"checks.py": "from rewardkit import criteria\ncriteria.file_exists('out.txt')\n"}
    )
    document = bridge(kit, tests, workspace, spec={"scoring": {"scheme": "all-pass/1"}})
    assert refused(document) == [("CASE_INVALID", "grader", None)]
    assert "declare it in one place" in document.refusals[0].why


def test_the_venv_is_the_version_measured() -> None:
    done = subprocess.run(
        [
            str(rewardkit_python()),
            "-I",
            "-c",
            "import importlib.metadata as m; print(m.version('harbor-rewardkit'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == REWARDKIT_VERSION


def test_a_layout_rewardkit_refuses_is_the_tasks(kit: Path, tmp_path: Path) -> None:
    tests, workspace = task(tmp_path, {"checks.py": "from rewardkit import criteria\ncriteria.(\n"})
    status, theirs, said = rewardkit_itself(kit, tests, workspace, tmp_path / "rk")
    assert status == 1 and theirs is None and "SyntaxError" in said
    document = bridge(kit, tests, workspace)
    no_reward(document)
    assert refused(document) == [("CASE_INVALID", "grader", None)]
    assert "SyntaxError" in document.refusals[0].why and "layout" in document.refusals[0].why


# --- the translation alone (a report as the probe writes it) ---------------------------------


def report(guard: str = "off", samples: list[Any] | None = None) -> tuple[Any, Any, Any]:
    """A probe report, reward.json and reward-details.json of a flat layout
    with one judge component of one criterion valued 1.0."""
    from truereward.readers.rewardkit import _Report

    criterion: dict[str, Any] = {"name": "ok", "value": 1.0, "raw": "yes", "weight": 1.0}
    if samples is not None:
        criterion.update(samples=samples, agreement=1.0)
    raw = {
        "rewardkit": "0.2.3",
        "python": "3.12.1",
        "layout": {
            "dimensions": {
                "reward": {
                    "type": "group",
                    "aggregation": "weighted-mean",
                    "threshold": 0.5,
                    "spec": False,
                    "inputs": [
                        {
                            "name": "quality",
                            "weight": 1.0,
                            "node": {
                                "type": "component",
                                "name": "quality",
                                "aggregation": "weighted-mean",
                                "threshold": 0.5,
                                "judge": "llm",
                                "guard": guard,
                                "criteria": [{"weight": 1.0, "optional": False}],
                                "scores": [{"name": "ok", "value": 1.0, "error": None}],
                            },
                        }
                    ],
                }
            },
            "specs": [],
            "spec_inputs": "components",
        },
        "faults": [],
        "warnings": [],
    }
    details = {"reward": {"score": 1.0, "kind": "llm", "criteria": [criterion]}}
    return _Report.model_validate(raw), {"reward": 1.0}, details


def translate(parts: tuple[Any, Any, Any], **options: Any) -> tuple[list[Any], Any]:
    """``_translate`` of a :func:`report` (probe report, reward.json, details)."""
    from truereward.readers.rewardkit import RewardkitSettings, _translate

    probe, written, details = parts
    return _translate(probe, written, details, RewardkitSettings.model_validate(options))


def test_a_judge_with_a_failed_sample_is_ungradable() -> None:
    rows, _ = translate(report(samples=["yes", None, "yes"]))
    assert [(row.verdict, row.code) for row in rows] == [("ungradable", "PROVIDER_FAILED")]
    assert "1 of the judge's 3 samples failed" in rows[0].why
    rows, scoring = translate(report(samples=["yes", "no", "yes"]))
    assert [(row.id, row.verdict, row.measures["score"]) for row in rows] == [
        ("quality::ok", "pass", 1.0)
    ]
    assert scoring.primary == "reward" and [d.name for d in scoring.dimensions] == [
        "reward",
        "tests/quality",
    ]


def test_a_penalising_guard_is_refused_and_a_flagging_one_is_not() -> None:
    with pytest.raises(tr.Ungradable) as caught:
        translate(report(guard="penalize"))
    assert caught.value.code == "CASE_INVALID" and "penalize" in caught.value.why
    rows, _ = translate(report(guard="flag"))
    assert rows[0].verdict == "pass"


def test_what_rewardkit_wrote_must_be_what_its_scores_fold_to() -> None:
    parsed, _, details = report()
    with pytest.raises(tr.Ungradable) as caught:
        translate((parsed, {"reward": 0.5}, details))
    assert caught.value.code == "REWARDKIT_FAILED" and "fold to 1.0" in caught.value.why
    with pytest.raises(tr.Ungradable) as keys:
        translate((parsed, {"reward": 1.0, "other": 1.0}, details))
    assert keys.value.code == "REWARDKIT_FAILED"
    details["reward"]["criteria"][0]["value"] = 0.0
    with pytest.raises(tr.Ungradable) as value:
        translate((parsed, {"reward": 1.0}, details))
    assert "rewardkit computed 1.0" in value.value.why


def test_primary_and_publish_name_rewardkits_rewards() -> None:
    with pytest.raises(tr.Ungradable) as caught:
        translate(report(), primary="style")
    assert (
        caught.value.code == "CASE_INVALID" and "not one of rewardkit's rewards" in caught.value.why
    )
    with pytest.raises(tr.Ungradable):
        translate(report(), publish=["nope"])
