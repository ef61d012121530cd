"""The Harbor task template of ``samples/harbor-task``, run as Harbor's verifier runs it.

Each scenario lays out what a trial's container holds at verification time, in a
temporary directory: ``tests/`` (a copy of the sample's ``tests/``, as Harbor copies it
to ``/tests``), ``app/`` (the agent's work: the sample's ``count.py``, changed as the
scenario's agent left it) and ``logs/`` (``/logs/verifier``, with whatever the agent
planted there). Then ``bash tests/test.sh`` runs from ``app/`` with the environment
variables the template reads (``TESTS_DIR``, ``APP_DIR``, ``GRADE_LOGS``,
``TEST_TIMEOUT_SEC``), under the versions the sample's Dockerfile pins: pytest 8.4.1,
pytest-json-ctrf 0.3.5, pytest-rerunfailures and pytest-timeout, installed into a
directory of their own, and no other pytest plugin (autoloading is off; the ones the
Dockerfile installs are named with ``-p``). What it leaves in ``logs/`` is checked with
``truereward verify`` and with Harbor 0.26's own reward parsing (``tests/harbor.py``).

The other tests run real sessions of the plugin beside the plugins verifiers use with
it: pytest-xdist, pytest-randomly, pytest-json-ctrf, pytest-rerunfailures and
pytest-timeout in one session, and the ``flaky`` package.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import truereward as tr
from tests.conftest import ROOT
from tests.harbor import harbor_python, harbor_reward
from tests.installs import install_target
from truereward import GradeDocument
from truereward.verify import verify_published

SAMPLE = ROOT / "samples" / "harbor-task"
VENV_BIN = Path(sys.executable).parent

#: The sample's case set, and what each case is.
CASE_KINDS = {
    "words-across-lines": "fail_to_pass",
    "empty-input": "fail_to_pass",
    "one-line": "pass_to_pass",
    "utf8-bytes": "pass_to_pass",
}

#: What the scenarios' agents do to the shipped count.py, on top of the sample's
#: solution (solution/solve.sh), as (the line it follows, what is inserted after it).
COLD_START = (
    "import sys\n",
    "from pathlib import Path\n\n"
    "_warm = Path(__file__).with_name('.warm')\n"
    "if not _warm.exists():\n"
    "    _warm.touch()\n"
    "    sys.exit('cold start')\n",
)
HANGS_ON_EMPTY_INPUT = (
    'text = data.decode("utf-8")\n',
    "if not data:\n    import time\n\n    time.sleep(3600)\n",
)


def dockerfile_pins() -> dict[str, str]:
    """The ``name==version`` pins of the sample's Dockerfile."""
    text = (SAMPLE / "environment" / "Dockerfile").read_text()
    return dict(re.findall(r"\b([A-Za-z0-9_.-]+)==([0-9][A-Za-z0-9.]*)", text))


@pytest.fixture(scope="module")
def pins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Dockerfile's pytest and pytest plugins (truereward is this checkout),
    installed into a directory of their own."""
    where = tmp_path_factory.mktemp("pins") / "site"
    wanted = [f"{name}=={version}" for name, version in dockerfile_pins().items()]
    for spec in wanted:
        if not spec.startswith("truereward=="):
            install_target(spec, where)
    return where


@dataclass
class Trial:
    """One verification: the directories, and how test.sh ended."""

    root: Path
    returncode: int
    output: str

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def names(self) -> set[str]:
        return {path.name for path in self.logs.iterdir()}


def agent_output(app: Path, *, solved: bool, changes: tuple[tuple[str, str], ...] = ()) -> None:
    """The agent's /app: the shipped count.py, with the sample's solution applied
    when ``solved``, then each change (a line, and what goes after it)."""
    app.mkdir(parents=True)
    shutil.copy(SAMPLE / "environment" / "count.py", app / "count.py")
    if solved:
        subprocess.run(
            ["bash", str(SAMPLE / "solution" / "solve.sh")],
            env={**os.environ, "APP_DIR": str(app)},
            check=True,
        )
    program = (app / "count.py").read_text()
    for after, inserted in changes:
        assert after in program, f"count.py has no line {after!r}"
        program = program.replace(after, after + inserted, 1)
    (app / "count.py").write_text(program)


def verify_as_harbor_does(
    root: Path,
    pins: Path,
    *,
    timeout_s: float = 60,
    addopts: str = "",
    tests: Path | None = None,
    front: tuple[Path, ...] = (),
    env: dict[str, str] | None = None,
) -> Trial:
    """``bash tests/test.sh`` from ``root/app`` with the logs directory ``root/logs``
    (both made beforehand), in a process group of its own that is ended afterwards (a
    program the session left running when it died goes with it). ``front``: directories
    put before the pins on the module path; ``env``: more environment variables."""
    if tests is None:
        tests = root / "tests"
        shutil.copytree(SAMPLE / "tests", tests)
    environment = {
        **os.environ,
        "PATH": f"{pins / 'bin'}{os.pathsep}{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(str(path) for path in (*front, pins)),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        # The Dockerfile's plugins, and no other (autoloading is off).
        "PYTEST_ADDOPTS": f"-p ctrf.main -p pytest_rerunfailures -p pytest_timeout {addopts}",
        "TESTS_DIR": str(tests),
        "APP_DIR": str(root / "app"),
        "GRADE_LOGS": str(root / "logs"),
        "TEST_TIMEOUT_SEC": str(timeout_s),
        **(env or {}),
    }
    process = subprocess.Popen(
        ["bash", str(tests / "test.sh")],
        cwd=root / "app",
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):  # it ended, and all it started
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    return Trial(root=root, returncode=process.returncode, output=output)


def published(trial: Trial) -> GradeDocument:
    """The grade the trial published, checked by ``truereward verify``."""
    done = truereward_cli("verify", str(trial.logs))
    assert done.returncode == 0, done.stdout + done.stderr + trial.output
    document, found = verify_published(trial.logs)
    assert found == []
    return document


def truereward_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "truereward", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def verdicts(document: GradeDocument) -> dict[str, str]:
    return {row.id: row.verdict for row in document.detail}


def forged_grade(directory: Path) -> bytes:
    """A valid grade document of 1.0 over the sample's case set, with its reward files,
    published into ``directory`` as a forger would: it verifies."""
    rows = [{"id": case, "kind": kind, "verdict": "pass"} for case, kind in CASE_KINDS.items()]
    document = tr.grade_document(rows, case_set=CASE_KINDS, run={"id": "forged"})
    tr.publish(document, directory)
    assert verify_published(directory)[1] == []
    assert (directory / "reward.txt").read_text() == "1.0\n"
    return (directory / "grade.json").read_bytes()


def plant(logs: Path) -> bytes:
    """What an agent leaves in /logs/verifier before the verifier runs: a forged,
    valid grade.json and its reward files, and a reward.txt of 1 as the template's
    echo writes it. Returns the forged grade's bytes."""
    forged = forged_grade(logs)
    (logs / "reward.txt").write_text("1\n")
    return forged


# --- the sample is Harbor's template -----------------------------------------------------------


def harbor_package() -> Path:
    """Where Harbor 0.26 is installed (its venv, ``tests/harbor.py``)."""
    done = subprocess.run(
        [
            str(harbor_python()),
            "-I",
            "-c",
            "import harbor, os; print(os.path.dirname(harbor.__file__))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return Path(done.stdout.strip())


def commands(script: str) -> list[str]:
    """A shell script's lines that are not comments or blank, each ``"${VAR:-default}..."``
    written as its default."""
    plain = re.sub(r'"\$\{[A-Z_]+:-([^}]*)\}([^"]*)"', r"\1\2", script)
    return [line for line in plain.splitlines() if line.strip() and not line.startswith("#")]


def test_test_sh_is_harbors_template_but_for_its_pytest_line() -> None:
    template = harbor_package() / "cli" / "template-task" / "pytest-tests" / "test.sh"
    theirs, ours = (
        commands(template.read_text()),
        commands((SAMPLE / "tests" / "test.sh").read_text()),
    )
    assert len(theirs) == len(ours), ours
    changed = [(line, mine) for line, mine in zip(theirs, ours, strict=True) if line != mine]
    assert len(changed) == 1, changed
    ((line, mine),) = changed
    assert line == "if pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA; then"
    # Every word of Harbor's line is kept, the plugin is named, and a failed session
    # ends the script before the template's `echo 0`.
    assert set(line.removesuffix("; then").split()) <= set(mine.split())
    assert "-p truereward.plugin" in mine and "--ctrf /logs/verifier/ctrf.json" in mine
    assert re.search(r"--grade-exit-ungradable [1-9]", mine)
    assert mine.endswith(" || exit; then")


def test_harbor_loads_the_sample_task() -> None:
    script = (
        "import json, sys\n"
        "from harbor.models.task.task import Task\n"
        "task = Task(sys.argv[1])\n"
        "print(json.dumps({'test': str(task.paths.discovered_test_path),"
        " 'verifier_timeout_sec': task.config.verifier.timeout_sec}))\n"
    )
    done = subprocess.run(
        [str(harbor_python()), "-I", "-c", script, str(SAMPLE)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert loaded == {"test": str(SAMPLE / "tests" / "test.sh"), "verifier_timeout_sec": 900.0}


def test_the_dockerfile_pins_harbors_versions_and_this_truereward() -> None:
    pinned = dockerfile_pins()
    assert set(pinned) == {
        "pytest",
        "pytest-json-ctrf",
        "pytest-rerunfailures",
        "pytest-timeout",
        "truereward",
    }
    assert pinned["truereward"] == tr.__version__
    template = harbor_package() / "cli" / "template-task" / "pytest-tests" / "Dockerfile"
    harbors = dict(re.findall(r"\b([A-Za-z0-9_.-]+)==([0-9][A-Za-z0-9.]*)", template.read_text()))
    assert harbors == {"pytest": "8.4.1", "pytest-json-ctrf": "0.3.5"}
    assert {name: pinned[name] for name in harbors} == harbors


def test_the_doc_shows_the_pytest_line_and_the_pins_as_they_are() -> None:
    doc = (ROOT / "docs" / "harbor.md").read_text()
    (line,) = [
        line for line in commands((SAMPLE / "tests" / "test.sh").read_text()) if "pytest" in line
    ]
    assert f"```bash\n{line}\n```" in doc
    shown = dict(re.findall(r"`([A-Za-z0-9_.-]+)==([0-9][A-Za-z0-9.]*)`", doc))
    assert shown == dockerfile_pins()


# --- the template, scenario by scenario -------------------------------------------------------


@pytest.mark.slow
def test_a_solved_task_is_rewarded_1(tmp_path: Path, pins: Path) -> None:
    agent_output(tmp_path / "app", solved=True)
    (tmp_path / "logs").mkdir()
    trial = verify_as_harbor_does(tmp_path, pins)
    assert trial.returncode == 0, trial.output
    assert "pytest-8.4.1" in trial.output, trial.output
    document = published(trial)
    assert document.gradable and document.reward == 1.0
    assert set(verdicts(document).values()) == {"pass"}
    assert json.loads((trial.logs / "reward.json").read_text()) == {"reward": 1.0}
    assert harbor_reward(trial.logs)["rewards"] == {"reward": 1.0}


@pytest.mark.slow
def test_an_unsolved_task_is_rewarded_0(tmp_path: Path, pins: Path) -> None:
    agent_output(tmp_path / "app", solved=False)
    (tmp_path / "logs").mkdir()
    trial = verify_as_harbor_does(tmp_path, pins)
    assert trial.returncode == 1, trial.output
    document = published(trial)
    assert document.gradable and document.reward == 0.0
    assert verdicts(document) == {
        "words-across-lines": "fail",
        "empty-input": "fail",
        "one-line": "pass",
        "utf8-bytes": "pass",
    }
    failing = {row.id: row for row in document.detail if row.verdict == "fail"}
    assert failing["empty-input"].why == "expected '0 0 0', got '0 1 0' (exit 0)"
    # --reruns 2: each failing case ran three times, and is a plain fail.
    assert all(len(row.reruns) == 2 for row in failing.values())
    assert document.flaky == ()
    trial_in_harbor = harbor_reward(trial.logs, exit_code=trial.returncode)
    assert trial_in_harbor["rewards"] == {"reward": 0.0}


@pytest.mark.slow
def test_a_case_that_passes_on_a_rerun_is_a_flaky_pass(tmp_path: Path, pins: Path) -> None:
    # The agent's program fails the first time it runs (a cold start), then works.
    agent_output(tmp_path / "app", solved=True, changes=(COLD_START,))
    (tmp_path / "logs").mkdir()
    trial = verify_as_harbor_does(tmp_path, pins)
    assert trial.returncode == 0, trial.output
    document = published(trial)
    assert document.gradable and document.reward == 1.0
    first = next(iter(CASE_KINDS))  # the first case in the module's order
    assert document.flaky == (first,)
    (row,) = [row for row in document.detail if row.id == first]
    assert row.verdict == "pass" and [rerun.verdict for rerun in row.reruns] == ["fail"]
    assert "cold start" in row.reruns[0].why
    view = json.loads((trial.logs / "grade-ctrf.json").read_text())
    (entry,) = [test for test in view["results"]["tests"] if test["name"] == first]
    assert entry["flaky"] is True and entry["retries"] == 1
    # The attempts before the final one (the entry's own status, passed).
    assert [attempt["status"] for attempt in entry["retryAttempts"]] == ["failed"]
    assert view["results"]["summary"]["flaky"] == 1
    assert harbor_reward(trial.logs)["rewards"] == {"reward": 1.0}


@pytest.mark.slow
def test_a_case_that_times_out_fails_and_the_run_is_graded(tmp_path: Path, pins: Path) -> None:
    # The agent's program hangs on empty input; pytest-timeout's signal method stops
    # the test each time it runs (the first run and both reruns).
    agent_output(tmp_path / "app", solved=True, changes=(HANGS_ON_EMPTY_INPUT,))
    (tmp_path / "logs").mkdir()
    trial = verify_as_harbor_does(tmp_path, pins, timeout_s=1)
    assert trial.returncode == 1, trial.output
    document = published(trial)
    assert document.gradable and document.reward == 0.0
    assert verdicts(document) == {**dict.fromkeys(CASE_KINDS, "pass"), "empty-input": "fail"}
    (row,) = [row for row in document.detail if row.id == "empty-input"]
    timed_out = "timed out: Timeout (>1.0s) from pytest-timeout"
    assert row.why.startswith(timed_out) and row.code == ""
    assert [rerun.why[: len(timed_out)] for rerun in row.reruns] == [timed_out] * 2
    assert document.refusals == ()
    assert harbor_reward(trial.logs, exit_code=1)["rewards"] == {"reward": 0.0}


@pytest.mark.slow
def test_what_the_agent_planted_never_becomes_the_reward(tmp_path: Path, pins: Path) -> None:
    agent_output(tmp_path / "app", solved=False)
    (tmp_path / "logs").mkdir()
    forged = plant(tmp_path / "logs")
    trial = verify_as_harbor_does(tmp_path, pins)
    document = published(trial)
    assert document.gradable and document.reward == 0.0
    assert (trial.logs / "grade.json").read_bytes() != forged
    assert (trial.logs / "grade.previous.json").read_bytes() == forged
    assert (trial.logs / "reward.txt").read_text() == "0.0\n"
    assert json.loads((trial.logs / "reward.json").read_text()) == {"reward": 0.0}
    assert harbor_reward(trial.logs, exit_code=trial.returncode)["rewards"] == {"reward": 0.0}


@pytest.mark.slow
@pytest.mark.parametrize(
    "squatted",
    [
        pytest.param(["grade.previous.json/x"], id="grade.previous.json"),
        pytest.param(["reward.txt/x", ".reward.txt.set-aside/x"], id="reward.txt-set-aside"),
        pytest.param(["grade-ctrf.json/x"], id="grade-ctrf.json"),
        pytest.param(["ctrf.json/x"], id="ctrf.json"),
    ],
)
def test_directories_squatting_the_names_set_aside_do_not_stop_the_grade(
    tmp_path: Path, pins: Path, squatted: list[str]
) -> None:
    # Beside its forged grade, the agent made directories (not empty) under names the
    # session sets files aside to or writes: had the session not published, the trial
    # would have no reward instead of its 0 (and Harbor would leave it out of its
    # mean), and the forged grade could stand as grade.json.
    agent_output(tmp_path / "app", solved=False)
    (tmp_path / "logs").mkdir()
    forged = plant(tmp_path / "logs")
    for path in squatted:
        inside = tmp_path / "logs" / path
        if inside.parent.is_file():
            inside.parent.unlink()
        inside.parent.mkdir(exist_ok=True)
        inside.write_text("squatting\n")
    trial = verify_as_harbor_does(tmp_path, pins)
    assert "NOT PUBLISHED" not in trial.output, trial.output
    document = published(trial)
    assert document.gradable and document.reward == 0.0
    assert (trial.logs / "grade.json").read_bytes() != forged
    assert forged in {path.read_bytes() for path in trial.logs.rglob("*") if path.is_file()}
    assert harbor_reward(trial.logs, exit_code=trial.returncode)["rewards"] == {"reward": 0.0}


@pytest.mark.slow
def test_a_session_killed_by_the_thread_method_leaves_no_reward(tmp_path: Path, pins: Path) -> None:
    # The agent planted a forged grade and reward files, and its program hangs:
    # pytest-timeout's thread method ends the whole process (os._exit) mid-session.
    agent_output(tmp_path / "app", solved=True, changes=(HANGS_ON_EMPTY_INPUT,))
    (tmp_path / "logs").mkdir()
    forged = plant(tmp_path / "logs")
    trial = verify_as_harbor_does(tmp_path, pins, timeout_s=1, addopts="--timeout-method=thread")
    assert trial.returncode == 1 and "Timeout" in trial.output, trial.output
    # No reward.txt, reward.json or grade.json; the planted ctrf.json (our view of the
    # forged grade) is left as it was: pytest-json-ctrf never wrote its report.
    assert trial.names() == {"grade.previous.json", "ctrf.json"}
    assert (trial.logs / "grade.previous.json").read_bytes() == forged
    done = truereward_cli("verify", str(trial.logs))
    assert done.returncode == 2
    assert "a grading session began here and did not publish" in done.stderr
    in_harbor = harbor_reward(trial.logs, exit_code=trial.returncode)
    assert in_harbor["rewards"] is None and in_harbor["reward_valid"] is False
    assert in_harbor["exception"] == "RewardFileNotFoundError"


@pytest.mark.slow
def test_a_session_pytest_passes_but_truereward_refuses_leaves_no_reward(
    tmp_path: Path, pins: Path
) -> None:
    # A verifier module with a test that is not a case: every test passes (pytest
    # exits 0 without --grade-exit-ungradable), the session is ungradable, and the
    # template's `echo 1` must not run.
    agent_output(tmp_path / "app", solved=True)
    (tmp_path / "logs").mkdir()
    tests = tmp_path / "tests"
    shutil.copytree(SAMPLE / "tests", tests)
    with (tests / "test_outputs.py").open("a") as module:
        module.write("\n\ndef test_the_helper_works() -> None:\n    assert True\n")
    trial = verify_as_harbor_does(tmp_path, pins, tests=tests)
    assert trial.returncode == 6, trial.output
    document = published(trial)
    assert not document.gradable and document.reward is None
    assert [item.code for item in document.refusals] == ["CASE_INVALID"]
    assert "reward.txt" not in trial.names() and "reward.json" not in trial.names()
    in_harbor = harbor_reward(trial.logs, exit_code=trial.returncode)
    assert in_harbor["rewards"] is None and in_harbor["exception"] == "RewardFileNotFoundError"


# --- pytest-json-ctrf's report is kept ----------------------------------------------------------

#: Loaded into the session (PYTEST_PLUGINS): after pytest-json-ctrf saves its report,
#: a copy of the file's bytes goes to $CTRF_WITNESS.
WITNESS = textwrap.dedent("""
    import os
    import shutil

    from ctrf.Report import Report

    _save = Report.save


    def _witnessed(self, report_file):
        _save(self, report_file)
        shutil.copyfile(report_file, os.environ["CTRF_WITNESS"])


    Report.save = _witnessed
""")


@pytest.mark.slow
@pytest.mark.parametrize("version", ["0.3.5", "0.6.1"])
def test_pytest_json_ctrf_report_is_kept_byte_for_byte(
    tmp_path: Path, pins: Path, version: str
) -> None:
    front = [tmp_path / "witness"]
    front[0].mkdir()
    (front[0] / "ctrf_witness.py").write_text(WITNESS)
    if version != dockerfile_pins()["pytest-json-ctrf"]:
        front.append(install_target(f"pytest-json-ctrf=={version}", tmp_path / "ctrf"))
    agent_output(tmp_path / "app", solved=False)
    (tmp_path / "logs").mkdir()
    witness = tmp_path / "as-written.json"
    trial = verify_as_harbor_does(
        tmp_path,
        pins,
        front=tuple(front),
        env={"PYTEST_PLUGINS": "ctrf_witness", "CTRF_WITNESS": str(witness)},
    )
    document = published(trial)
    assert document.reward == 0.0
    assert document.publication.ctrf == "grade-ctrf.json"
    kept = (trial.logs / "ctrf.json").read_bytes()
    assert kept == witness.read_bytes()
    theirs = json.loads(kept)
    assert theirs["results"]["tool"] == {"name": "pytest", "version": "8.4.1"}
    # 0.3.5 writes no reportFormat (and merges parametrised tests into one entry).
    assert theirs.get("reportFormat") == (None if version == "0.3.5" else "CTRF")
    assert "truereward" not in kept.decode()
    ours = json.loads((trial.logs / "grade-ctrf.json").read_text())
    assert {test["name"] for test in ours["results"]["tests"]} == set(CASE_KINDS)
    assert ours["extra"]["truereward"]["grade_sha256"]
    assert harbor_reward(trial.logs, exit_code=1)["rewards"] == {"reward": 0.0}


# --- the plugin beside the plugins verifiers use ------------------------------------------------

#: A deterministic verifier module: each case's verdict comes from verdicts.json
#: ("pass", "fail", or "missing": the reader refuses it with EVIDENCE_MISSING).
COMPANION_SUITE = textwrap.dedent("""
    import json
    from pathlib import Path

    import pytest
    from truereward import CaseResult
    from truereward.codes import Ungradable
    from truereward.plugin import cases

    CASES = cases("task.json")
    VERDICTS = json.loads(Path(__file__).with_name("verdicts.json").read_text())


    def read_case(case):
        verdict = VERDICTS[case.id]
        if verdict == "missing":
            raise Ungradable("EVIDENCE_MISSING", f"{case.id}: the run left no output")
        why = "" if verdict == "pass" else f"{case.id}: wrong output"
        return CaseResult(id=case.id, kind=case.kind, verdict=verdict, why=why)


    @pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
    def test_case(case, grade):
        grade(case, read_case)
""")

COMPANION_CASES = {
    "parse-dates": "fail_to_pass",
    "parse-times": "fail_to_pass",
    "parse-zones": "fail_to_pass",
    "keeps-api": "pass_to_pass",
    "keeps-cli": "pass_to_pass",
    "keeps-docs": "pass_to_pass",
}


def plugin_session(
    project: Path, logs: Path, *args: str, autoload: bool = True
) -> subprocess.CompletedProcess[str]:
    """A pytest session of ``project`` with the plugin, publishing into ``logs``."""
    env = {key: value for key, value in os.environ.items() if key != "GRADE_LOGS"}
    if not autoload:
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "truereward.plugin", "-o", "addopts="),
            *args,
            f"--grade-logs={logs}",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def same_grade_fields(document: GradeDocument) -> dict[str, Any]:
    """What a grade must not change with the plugins beside ours."""
    return {
        "gradable": document.gradable,
        "reward": document.reward,
        "codes": sorted(item.code for item in document.refusals),
        "rows": sorted((row.id, row.verdict, row.code) for row in document.detail),
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "given",
    [
        pytest.param({"parse-times": "fail", "keeps-cli": "fail"}, id="gradable"),
        pytest.param({"parse-times": "fail", "keeps-docs": "missing"}, id="ungradable"),
    ],
)
def test_xdist_randomly_ctrf_reruns_and_timeout_together_give_the_plain_grade(
    tmp_path: Path, given: dict[str, str]
) -> None:
    project = tmp_path / "verifier"
    project.mkdir()
    (project / "task.json").write_text(json.dumps({"cases": COMPANION_CASES}))
    (project / "test_grade.py").write_text(COMPANION_SUITE)
    (project / "verdicts.json").write_text(
        json.dumps({case: given.get(case, "pass") for case in COMPANION_CASES})
    )
    plain = plugin_session(project, tmp_path / "plain", autoload=False)
    assert "plugins:" not in plain.stdout, plain.stdout  # no other plugin in that session
    together = tmp_path / "together"
    companions = plugin_session(
        project,
        together,
        "-p",
        "no:flaky",
        "-p",
        "randomly",
        "-n",
        "2",
        f"--ctrf={together / 'ctrf.json'}",
        "--reruns",
        "2",
        "--timeout",
        "30",
    )
    for plugin in ("randomly", "xdist", "json-ctrf", "rerunfailures", "timeout"):
        assert f"{plugin}-" in companions.stdout, companions.stdout
    assert "Using --randomly-seed=" in companions.stdout
    assert plain.returncode == companions.returncode == 1
    one, other = published_in(tmp_path / "plain"), published_in(together)
    assert same_grade_fields(one) == same_grade_fields(other)
    assert one.gradable == ("missing" not in given.values())
    # A failing case under --reruns 2 is a plain fail with its two earlier executions.
    (failing,) = [row for row in other.detail if row.id == "parse-times"]
    assert failing.verdict == "fail" and failing.code == ""
    assert [rerun.verdict for rerun in failing.reruns] == ["fail", "fail"]
    assert "CASE_INVALID" not in same_grade_fields(other)["codes"]
    assert other.flaky == () and other.publication.ctrf == "grade-ctrf.json"
    theirs = json.loads((together / "ctrf.json").read_text())
    assert theirs["reportFormat"] == "CTRF"
    # Our view counts the reruns as pytest-json-ctrf did in the same session:
    # retries, and retryAttempts for the executions before the final one.
    ours = json.loads((together / "grade-ctrf.json").read_text())["results"]["tests"]
    (their,) = [test for test in theirs["results"]["tests"] if "parse-times" in test["name"]]
    (our,) = [test for test in ours if test["name"] == "parse-times"]
    assert (our["status"], our["retries"]) == (their["status"], their["retries"]) == ("failed", 2)
    attempts = [
        [(item["attempt"], item["status"]) for item in test["retryAttempts"]]
        for test in (our, their)
    ]
    assert attempts[0] == attempts[1] == [(1, "failed"), (2, "failed")]


def published_in(logs: Path) -> GradeDocument:
    document, found = verify_published(logs)
    assert found == []
    return document


#: A verifier module whose case tests carry the flaky package's decorator: "wobbly"
#: fails its first execution and passes the next, "broken" always fails.
FLAKY_SUITE = textwrap.dedent("""
    from pathlib import Path

    import pytest
    from flaky import flaky
    from truereward import CaseResult
    from truereward.plugin import cases

    CASES = cases("task.json")
    RAN = Path(__file__).with_name("ran")


    def read_case(case):
        runs = RAN / case.id
        runs.mkdir(parents=True, exist_ok=True)
        count = len(list(runs.iterdir()))
        (runs / str(count)).touch()
        passes = case.id == "steady" or (case.id == "wobbly" and count > 0)
        return CaseResult(
            id=case.id,
            kind=case.kind,
            verdict="pass" if passes else "fail",
            why="" if passes else f"{case.id}: execution {count + 1} failed",
        )


    @flaky(max_runs=3)
    @pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
    def test_case(case, grade):
        grade(case, read_case)
""")


@pytest.mark.slow
def test_the_flaky_package_gives_a_flaky_pass_and_a_plain_fail(tmp_path: Path) -> None:
    project = tmp_path / "verifier"
    project.mkdir()
    kinds = {"wobbly": "fail_to_pass", "broken": "fail_to_pass", "steady": "pass_to_pass"}
    (project / "task.json").write_text(json.dumps({"cases": kinds}))
    (project / "test_grade.py").write_text(FLAKY_SUITE)
    logs = tmp_path / "logs"
    done = plugin_session(project, logs, "-p", "no:rerunfailures", "-p", "no:randomly")
    assert "flaky-" in done.stdout and "rerunfailures" not in done.stdout, done.stdout
    assert done.returncode == 1, done.stdout + done.stderr
    document = published_in(logs)
    assert document.gradable and document.reward == 0.0
    rows = {row.id: row for row in document.detail}
    assert rows["wobbly"].verdict == "pass"
    assert [rerun.verdict for rerun in rows["wobbly"].reruns] == ["fail"]
    assert rows["broken"].verdict == "fail" and rows["broken"].code == ""
    assert [rerun.why for rerun in rows["broken"].reruns] == [
        "broken: execution 1 failed",
        "broken: execution 2 failed",
    ]
    assert rows["steady"].verdict == "pass" and rows["steady"].reruns == ()
    assert document.flaky == ("wobbly",)
    assert document.refusals == ()
