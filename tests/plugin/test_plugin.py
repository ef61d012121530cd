"""The pytest plugin, run as real pytest sessions (one process and -n 2),
in this process through pytester unless a test needs a process of its own:
it publishes the grade of the whole case set, or a refusal naming what
happened, never a reward over a subset or a broken session."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from truereward import GradeDocument
from truereward.plugin import LOGS_ENV
from truereward.verify import verify_published

CASES = [
    {"id": "fix-parser", "kind": "fail_to_pass"},
    {"id": "fix-cli", "kind": "fail_to_pass"},
    {"id": "slow-guard", "kind": "pass_to_pass"},
    {"id": "keep-api", "kind": "pass_to_pass"},
]

TEST_MODULE = textwrap.dedent("""
    import json, os, signal
    from pathlib import Path

    import pytest
    from truereward import CaseResult
    from truereward.codes import Ungradable
    from truereward.plugin import cases

    CASES = cases("task.json")
    ANSWERS = json.loads((Path(__file__).parent / "answers.json").read_text())


    def read_case(case):
        answer = ANSWERS.get(case.id, "pass")
        if answer == "skip":
            pytest.skip("no network here")
        if answer == "kill" and os.environ.get("PYTEST_XDIST_WORKER"):
            os.kill(os.getpid(), signal.SIGKILL)
        if answer == "crash":
            raise KeyError("stdout")
        if answer.startswith("ungradable:"):
            raise Ungradable(answer.split(":", 1)[1], f"{case.id} could not be read")
        verdict = "pass" if answer == "double" else answer
        return CaseResult(id=case.id, kind=case.kind, verdict=verdict)


    @pytest.mark.parametrize(
        "case",
        [pytest.param(c, marks=pytest.mark.slow) if c.id.startswith("slow") else c
         for c in CASES],
        ids=lambda c: c.id,
    )
    def test_case(case, grade):
        grade(case, read_case)
        if ANSWERS.get(case.id) == "double":
            grade(case, read_case)
""")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "verifier"
    root.mkdir()
    (root / "task.json").write_text(json.dumps({"cases": CASES}))
    (root / "test_grade.py").write_text(TEST_MODULE)
    (root / "answers.json").write_text("{}")
    (root / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: a slow case\n")
    return root


def answers(project: Path, **given: str) -> None:
    (project / "answers.json").write_text(
        json.dumps({key.replace("_", "-"): value for key, value in given.items()})
    )


#: What a session of the plugin returns: pytest's exit status and its output.
Run = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def run(pytester: pytest.Pytester) -> Run:
    """Run a pytest session of ``project`` with the plugin, in this process
    (pytester restores the modules, paths and output it changes), and return
    its status and output like :func:`subprocess.run`. xdist's workers
    (``workers``) are real processes all the same. The plugin is named with
    ``-p`` as on a command line; the plugins the session does not name stay
    unloaded (``PYTEST_DISABLE_PLUGIN_AUTOLOAD``). ``env`` is set for the
    session; ``GRADE_LOGS`` is unset unless it names it."""

    def session(
        project: Path,
        *args: str,
        workers: int = 0,
        env: dict[str, str] | None = None,
        logs: Path | None = None,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        # Without the unraisable-exception plugin, which collects the whole
        # heap of this worker (Prefect and all) twice a session.
        command = ["-p", "truereward.plugin", "-p", "no:randomly", "-p", "no:unraisableexception"]
        command += ["-o", "addopts=", *args]
        if workers:
            command += ["-p", "xdist", "-n", str(workers)]
        if logs is not None:
            # One token: pytest takes an existing path among its arguments as a
            # hint for the root directory, option values included.
            command += [f"--grade-logs={logs}"]
        with pytest.MonkeyPatch.context() as patch:
            patch.chdir(cwd or project)
            # This test may itself run on an xdist worker: the session must
            # not take itself for one.
            for name in [key for key in os.environ if key.startswith("PYTEST_XDIST_")]:
                patch.delenv(name)
            patch.delenv(LOGS_ENV, raising=False)
            patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
            for name, value in (env or {}).items():
                patch.setenv(name, value)
            result = pytester.runpytest_inprocess(*command)
        return subprocess.CompletedProcess(
            ["pytest", *command], int(result.ret), result.stdout.str(), result.stderr.str()
        )

    return session


def run_process(
    project: Path, *args: str, workers: int = 0, env: dict[str, str], logs: Path
) -> subprocess.CompletedProcess[str]:
    """The session :func:`run` runs, in a pytest process of its own."""
    command = [sys.executable, "-m", "pytest", "-p", "truereward.plugin", "-p", "no:randomly"]
    command += ["-o", "addopts=", *args, f"--grade-logs={logs}"]
    if workers:
        command += ["-p", "xdist", "-n", str(workers)]
    environment = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", **env}
    environment.pop(LOGS_ENV, None)
    return subprocess.run(
        command,
        cwd=project,
        capture_output=True,
        text=True,
        env=environment,
        check=False,
        timeout=300,
    )


def grade_of(logs: Path) -> GradeDocument:
    document, found = verify_published(logs)
    assert found == [], found
    return document


def refusal_text(document: GradeDocument) -> str:
    return "\n".join(f"{item.code} {item.case} {item.why}" for item in document.refusals)


#: A session in one process, and on two xdist workers (real processes: slow).
MODES = [
    pytest.param(0, id="one-process"),
    pytest.param(2, id="xdist", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("workers", MODES)
def test_a_clean_session_publishes_the_reward(project, tmp_path, workers, run):
    logs = tmp_path / "logs"
    result = run(project, workers=workers, logs=logs)
    assert result.returncode == 0, result.stdout + result.stderr
    document = grade_of(logs)
    assert document.gradable and document.reward == 1.0
    assert (logs / "reward.txt").read_text() == "1.0\n"
    assert "truereward: reward 1.0" in result.stdout


def normalized(document: GradeDocument) -> dict[str, Any]:
    data = json.loads(document.to_bytes())
    data["run"] = None
    for row in data["detail"]:
        row["duration_s"] = 0
    return data


@pytest.mark.slow
def test_one_process_and_xdist_publish_the_same_grade(project, tmp_path, run):
    answers(project, fix_cli="fail")
    run(project, logs=tmp_path / "one")
    run(project, workers=2, logs=tmp_path / "two")
    one, two = grade_of(tmp_path / "one"), grade_of(tmp_path / "two")
    assert one.gradable and one.reward == 0.0
    assert normalized(one) == normalized(two)


@pytest.mark.parametrize("workers", MODES)
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["test_grade.py::test_case[fix-parser]"], "node ids given on the command line ("),
        (["-k", "parser"], "deselected 3 test(s) (-k parser)"),
        (["-m", "not slow"], "deselected 1 test(s) (-m not slow)"),
        (["--deselect", "test_grade.py::test_case[keep-api]"], "deselected 1 test(s) (--deselect"),
    ],
)
def test_selecting_part_of_the_case_set_is_refused(project, tmp_path, workers, args, expected, run):
    logs = tmp_path / "logs"
    run(project, *args, workers=workers, logs=logs)
    document = grade_of(logs)
    assert not document.gradable
    assert not (logs / "reward.txt").exists()
    assert expected in refusal_text(document)
    assert "CASES_MISSING" in refusal_text(document)


@pytest.mark.parametrize("workers", MODES)
def test_lf_after_a_failing_run_is_refused(project, tmp_path, workers, run):
    logs = tmp_path / "logs"
    answers(project, fix_cli="fail")
    run(project, workers=workers, logs=logs)
    assert grade_of(logs).reward == 0.0
    run(project, "--lf", workers=workers, logs=logs)
    document = grade_of(logs)
    assert not document.gradable
    assert "limited by --lf" in refusal_text(document)
    assert not (logs / "reward.txt").exists()


@pytest.mark.parametrize("workers", [pytest.param(0, id="one-process")])
def test_a_second_stepwise_run_is_refused(project, tmp_path, workers, run):
    logs = tmp_path / "logs"
    answers(project, fix_cli="fail")
    run(project, "--sw", workers=workers, logs=logs)
    run(project, "--sw", workers=workers, logs=logs)
    document = grade_of(logs)
    assert not document.gradable
    assert "--sw" in refusal_text(document)


@pytest.mark.parametrize("workers", MODES)
def test_stopping_early_with_x_is_refused(project, tmp_path, workers, run):
    logs = tmp_path / "logs"
    answers(project, fix_parser="fail")
    run(project, "-x", workers=workers, logs=logs)
    document = grade_of(logs)
    assert not document.gradable
    assert "stopped early" in refusal_text(document)


@pytest.mark.slow
def test_a_worker_killed_mid_case_is_refused(project, tmp_path, run):
    logs = tmp_path / "logs"
    answers(project, fix_cli="kill")
    run(project, workers=2, logs=logs)
    document = grade_of(logs)
    assert not document.gradable
    assert any(
        item.code == "CASE_NOT_GRADED" and item.case == "fix-cli" for item in document.refusals
    ), refusal_text(document)
    assert not (logs / "reward.txt").exists()


@pytest.mark.parametrize("workers", MODES)
@pytest.mark.parametrize(
    ("answer", "code", "text"),
    [
        ("double", "CASE_INVALID", "graded case keep-api twice; one test grades one case"),
        ("skip", "CASE_NOT_GRADED", "was skipped (no network here)"),
        ("crash", "CASE_NOT_GRADED", "assessing the case raised KeyError"),
        ("ungradable:EVIDENCE_MISSING", "EVIDENCE_MISSING", "could not be read"),
    ],
)
def test_a_case_without_a_proper_result_is_refused(
    project, tmp_path, workers, answer, code, text, run
):
    logs = tmp_path / "logs"
    answers(project, keep_api=answer)
    result = run(project, workers=workers, logs=logs)
    # pytest's own status: a failed test is 1; a skip alone is 0 (use
    # --grade-exit-ungradable for a status that says "no reward").
    assert result.returncode == (0 if answer == "skip" else 1)
    document = grade_of(logs)
    assert not document.gradable
    matching = [item for item in document.refusals if item.code == code]
    assert matching, refusal_text(document)
    assert any(text in item.why for item in matching), refusal_text(document)
    assert not (logs / "reward.txt").exists()


@pytest.mark.parametrize("workers", MODES)
def test_an_extra_non_case_test_is_refused(project, tmp_path, workers, run):
    (project / "test_other.py").write_text("def test_unrelated():\n    assert True\n")
    logs = tmp_path / "logs"
    run(project, workers=workers, logs=logs)
    document = grade_of(logs)
    assert not document.gradable
    assert (
        "test_other.py::test_unrelated is a test of the session that is not a case"
        in refusal_text(document)
    )


@pytest.mark.slow
@pytest.mark.parametrize("workers", MODES)
def test_a_reader_code_declared_only_through_an_entry_point(project, tmp_path, workers):
    plugin_dir = tmp_path / "site"
    plugin_dir.mkdir()
    (plugin_dir / "judge_codes_demo.py").write_text(
        'CODES = {"DEMO_JUDGE_SILENT": {"meaning": "the judge said nothing", '
        '"blame": "grader", "retry": True}}\n'
    )
    info = plugin_dir / "judge_codes_demo-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: judge-codes-demo\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[truereward.codes]\ndemo = judge_codes_demo:CODES\n")
    answers(project, fix_parser="ungradable:DEMO_JUDGE_SILENT")
    logs = tmp_path / "logs"
    # A process of its own: entry points are found on the path it starts with.
    run_process(project, workers=workers, logs=logs, env={"PYTHONPATH": str(plugin_dir)})
    # This process does not know the reader's code, so read the document as JSON.
    document = json.loads((logs / "grade.json").read_text())
    (refusal,) = [item for item in document["refusals"] if item["case"] == "fix-parser"]
    assert refusal["code"] == "DEMO_JUDGE_SILENT"
    assert refusal["blame"] == "grader"
    assert not (logs / "reward.txt").exists()


def test_no_declared_case_set_is_refused(project, tmp_path, run):
    module = (project / "test_grade.py").read_text()
    (project / "test_grade.py").write_text(
        module.replace(
            'CASES = cases("task.json")',
            """
from truereward import CaseSpec as Case
CASES = [Case(id=c["id"], kind=c["kind"]) for c in json.loads(
    (Path(__file__).parent / "task.json").read_text())["cases"]]""",
        )
    )
    logs = tmp_path / "logs"
    run(project, logs=logs)
    assert "no case set was declared" in refusal_text(grade_of(logs))


def test_collect_only_writes_nothing_and_deletes_nothing(project, tmp_path, run):
    logs = tmp_path / "logs"
    run(project, logs=logs)
    before = {path.name: path.read_bytes() for path in logs.iterdir()}
    for args in (["--collect-only"], ["--collect-only", "-n", "2"], ["--fixtures"], ["--markers"]):
        run(project, *args, logs=logs)
        assert {path.name: path.read_bytes() for path in logs.iterdir()} == before
    empty = tmp_path / "empty"
    run(project, "--collect-only", logs=empty)
    assert not empty.exists()


def test_an_earlier_grade_is_replaced_never_left_beside_a_refusal(project, tmp_path, run):
    logs = tmp_path / "logs"
    run(project, logs=logs)
    assert (logs / "reward.txt").read_text() == "1.0\n"
    answers(project, fix_cli="fail")
    run(project, logs=logs)
    assert (logs / "reward.txt").read_text() == "0.0\n"
    answers(project, fix_cli="crash")
    run(project, logs=logs)
    assert not (logs / "reward.txt").exists()
    assert not (logs / "reward.json").exists()
    assert not grade_of(logs).gradable


def test_a_collection_error_is_refused(project, tmp_path, run):
    logs = tmp_path / "logs"
    run(project, logs=logs)
    (project / "task.json").write_text('{"cases": [{"id": "x", "kind": "nonsense"}]}')
    run(project, logs=logs)
    document = grade_of(logs)
    assert not document.gradable
    assert "collecting test_grade.py failed" in refusal_text(document)
    assert not (logs / "reward.txt").exists()


def test_exit_status_for_an_ungradable_session_is_opt_in(project, tmp_path, run):
    answers(project, keep_api="ungradable:GRADER_TIMEOUT")
    assert run(project, logs=tmp_path / "a").returncode == 1
    assert run(project, "--grade-exit-ungradable", "5", logs=tmp_path / "b").returncode == 5
    answers(project)
    assert run(project, "--grade-exit-ungradable", "5", logs=tmp_path / "c").returncode == 0


def test_logs_directory_from_the_environment_and_the_ini(project, tmp_path, run):
    env_logs, ini_logs = tmp_path / "from-env", tmp_path / "from-ini"
    (project / "pytest.ini").write_text(
        f"[pytest]\nmarkers =\n    slow: a slow case\ngrade_logs = {ini_logs}\n"
    )
    run(project, env={"GRADE_LOGS": str(env_logs)})
    assert grade_of(env_logs).reward == 1.0
    run(project)
    assert grade_of(ini_logs).reward == 1.0


def test_a_relative_ini_logs_directory_is_taken_from_the_ini_file(project, run):
    (project / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    slow: a slow case\ngrade_logs = graded\n"
    )
    elsewhere = project / "sub"
    elsewhere.mkdir()
    run(project, "--rootdir", str(project), str(project), cwd=elsewhere)
    assert grade_of(project / "graded").reward == 1.0
    assert not (elsewhere / "graded").exists()


@pytest.mark.slow
def test_the_plugin_is_not_active_unless_named(project, tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-o",
            "addopts=",
            "--grade-logs",
            str(tmp_path / "l"),
        ],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode != 0
    assert "unrecognized arguments: --grade-logs" in result.stderr


@pytest.mark.slow
def test_a_verifier_stopped_with_sigterm_publishes_a_refusal(project, tmp_path, run):
    # A harness stops a verifier that ran out of time with SIGTERM; the grade
    # an earlier session published there must not stand for this one.
    logs = tmp_path / "logs"
    assert run(project, logs=logs).returncode == 0
    assert grade_of(logs).reward == 1.0
    (project / "test_slow.py").write_text(
        "import time\n\ndef test_zz_sleeps():\n    time.sleep(60)\n"
    )
    command = [sys.executable, "-m", "pytest", "-p", "truereward.plugin", "-p", "no:randomly"]
    command += ["-o", "addopts=", f"--grade-logs={logs}"]
    process = subprocess.Popen(command, cwd=project, stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    seen = ""
    while "test_grade.py" not in seen:  # the session is running its tests
        line = process.stdout.readline()
        assert line, "pytest ended before running its tests"
        seen += line
    time.sleep(1.0)  # inside the sleeping test
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=60)
    document = grade_of(logs)
    assert not document.gradable and document.reward is None
    assert not (logs / "reward.txt").exists()
    assert "INTERRUPTED" in refusal_text(document)


# --- subtests: several cases in one test, each in a subtest of its own -------------------------

#: The verifier module graded in one test, one subtest per case (pytest 9's subtests).
SUBTESTS_MODULE = TEST_MODULE.split("@pytest.mark.parametrize")[0] + textwrap.dedent("""
    def test_cases(subtests, grade):
        for case in CASES:
            with subtests.test(case=case.id):
                grade(case, read_case)
                if ANSWERS.get(case.id) == "double":
                    grade(case, read_case)
""")


@pytest.fixture
def subtests_project(project: Path) -> Path:
    (project / "test_grade.py").write_text(SUBTESTS_MODULE)
    return project


@pytest.mark.parametrize("workers", MODES)
def test_subtests_grade_one_case_each(subtests_project, tmp_path, workers, run):
    logs = tmp_path / "logs"
    result = run(subtests_project, workers=workers, logs=logs)
    assert result.returncode == 0, result.stdout + result.stderr
    document = grade_of(logs)
    assert document.gradable and document.reward == 1.0
    assert sorted(row.id for row in document.detail) == sorted(case["id"] for case in CASES)


@pytest.mark.parametrize("workers", MODES)
def test_a_failing_subtest_fails_its_case_and_the_others_are_still_graded(
    subtests_project, tmp_path, workers, run
):
    logs = tmp_path / "logs"
    answers(subtests_project, fix_parser="fail")  # the first case: the loop goes on
    result = run(subtests_project, workers=workers, logs=logs)
    assert result.returncode == 1
    document = grade_of(logs)
    assert document.gradable and document.reward == 0.0
    verdicts = {row.id: row.verdict for row in document.detail}
    assert verdicts == {
        "fix-parser": "fail",
        "fix-cli": "pass",
        "slow-guard": "pass",
        "keep-api": "pass",
    }


@pytest.mark.slow
def test_subtests_and_parametrized_tests_give_the_same_grade(project, tmp_path, run):
    answers(project, fix_cli="fail", keep_api="ungradable:EVIDENCE_MISSING")
    run(project, logs=tmp_path / "parametrized")
    (project / "test_grade.py").write_text(SUBTESTS_MODULE)
    run(project, workers=2, logs=tmp_path / "subtests")
    one, other = grade_of(tmp_path / "parametrized"), grade_of(tmp_path / "subtests")
    assert not one.gradable
    assert normalized(one) == normalized(other)


@pytest.mark.parametrize("workers", MODES)
@pytest.mark.parametrize(
    ("answer", "code", "text"),
    [
        ("skip", "CASE_NOT_GRADED", "subtest (case=keep-api) ended without a result (skipped"),
        ("double", "CASE_INVALID", "graded case keep-api twice"),
        ("crash", "CASE_NOT_GRADED", "assessing the case raised KeyError"),
    ],
)
def test_a_subtest_without_a_proper_result_is_refused(
    subtests_project, tmp_path, workers, answer, code, text, run
):
    logs = tmp_path / "logs"
    answers(subtests_project, keep_api=answer)
    run(subtests_project, workers=workers, logs=logs)
    document = grade_of(logs)
    assert not document.gradable and not (logs / "reward.txt").exists()
    assert any(item.code == code and text in item.why for item in document.refusals), refusal_text(
        document
    )


def test_grading_several_cases_in_one_test_without_subtests_says_what_to_write(
    project, tmp_path, run
):
    (project / "test_grade.py").write_text(
        TEST_MODULE.split("@pytest.mark.parametrize")[0]
        + "\ndef test_cases(grade):\n    for case in CASES:\n        grade(case, read_case)\n"
    )
    logs = tmp_path / "logs"
    run(project, logs=logs)
    document = grade_of(logs)
    assert not document.gradable
    text = refusal_text(document)
    assert "called grade() a second time (for fix-cli) in the same test as fix-parser" in text
    assert "with subtests.test(case=case.id): grade(case, assess)" in text
    assert "@pytest.mark.parametrize('case', CASES, ids=str)" in text


def test_the_same_case_graded_twice_in_one_test_is_refused(project, tmp_path, run):
    (project / "test_grade.py").write_text(
        TEST_MODULE.split("@pytest.mark.parametrize")[0]
        + textwrap.dedent("""
            def test_cases(subtests, grade):
                for case in [*CASES, CASES[0]]:
                    with subtests.test(case=case.id):
                        grade(case, read_case)
        """)
    )
    logs = tmp_path / "logs"
    run(project, logs=logs)
    document = grade_of(logs)
    assert not document.gradable
    assert "test_grade.py::test_cases graded case fix-parser twice" in refusal_text(document)


# --- pytest-repeat: the repetitions of a case fold into one row ---------------------------------

#: read_case answers that change with the repetition: "fail-once" fails the case's
#: first execution, "ungradable-once" refuses it; the others pass. Executions are
#: numbered with exclusive creates, so workers of one session agree.
REPEAT_ANSWERS = textwrap.dedent("""

    def execution(case):
        runs = Path(__file__).parent / "ran" / case.id
        runs.mkdir(parents=True, exist_ok=True)
        number = 0
        while True:
            try:
                os.close(os.open(runs / str(number), os.O_CREAT | os.O_EXCL))
                return number
            except FileExistsError:
                number += 1


    _read_case = read_case


    def read_case(case):
        first = execution(case) == 0
        if ANSWERS.get(case.id) == "fail-once" and first:
            return CaseResult(id=case.id, kind=case.kind, verdict="fail", why="cold start")
        if ANSWERS.get(case.id) == "ungradable-once" and first:
            raise Ungradable("EVIDENCE_MISSING", f"{case.id}: nothing the first time")
        if ANSWERS.get(case.id, "").endswith("-once"):
            return CaseResult(id=case.id, kind=case.kind, verdict="pass")
        return _read_case(case)
""")


def repeated(module: str) -> str:
    """``module`` with REPEAT_ANSWERS' read_case in front of its tests."""
    head, _, tests = module.partition("\n@pytest.mark.parametrize")
    if not tests:
        head, _, tests = module.partition("\ndef test_cases")
        return head + REPEAT_ANSWERS + "\ndef test_cases" + tests
    return head + REPEAT_ANSWERS + "\n@pytest.mark.parametrize" + tests


REPEAT = ("-p", "pytest_repeat", "--count", "3")


@pytest.mark.parametrize("workers", MODES)
def test_pytest_repeat_folds_the_repetitions_of_each_case(project, tmp_path, workers, run):
    (project / "test_grade.py").write_text(repeated(TEST_MODULE))
    logs = tmp_path / "logs"
    result = run(project, *REPEAT, workers=workers, logs=logs)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "12 passed" in result.stdout
    document = grade_of(logs)
    assert document.gradable and document.reward == 1.0
    assert len(document.detail) == len(CASES)
    for row in document.detail:
        assert row.verdict == "pass" and row.why == "passed all 3 repetitions"
        assert row.measures == {"repetitions": 3.0, "repetitions_passed": 3.0}
        assert [item.name for item in row.observations] == [
            f"repetition {step} of 3" for step in (1, 2, 3)
        ]


@pytest.mark.parametrize("workers", MODES)
def test_a_case_must_pass_every_repetition(project, tmp_path, workers, run):
    (project / "test_grade.py").write_text(repeated(TEST_MODULE))
    answers(project, fix_cli="fail-once")
    logs = tmp_path / "logs"
    result = run(project, *REPEAT, workers=workers, logs=logs)
    assert result.returncode == 1
    document = grade_of(logs)
    assert document.gradable and document.reward == 0.0
    (row,) = [row for row in document.detail if row.id == "fix-cli"]
    assert row.verdict == "fail"
    assert re.fullmatch(r"failed 1 of 3 repetitions; repetition [123]: cold start", row.why)
    assert row.measures["repetitions_passed"] == 2.0
    assert sorted(item.verdict for item in row.observations) == ["fail", "pass", "pass"]


def test_a_repetition_that_cannot_be_graded_leaves_the_case_ungradable(project, tmp_path, run):
    (project / "test_grade.py").write_text(repeated(TEST_MODULE))
    answers(project, keep_api="ungradable-once")
    logs = tmp_path / "logs"
    run(project, *REPEAT, logs=logs)
    document = grade_of(logs)
    assert not document.gradable and not (logs / "reward.txt").exists()
    (row,) = [row for row in document.detail if row.id == "keep-api"]
    assert row.verdict == "ungradable" and row.code == "EVIDENCE_MISSING"
    assert row.why.startswith("repetition 1 of 3 could not be graded: keep-api: nothing")
    assert [item.code for item in document.refusals] == ["EVIDENCE_MISSING"]


@pytest.mark.slow
def test_pytest_repeat_with_subtests_and_the_repeat_marker(project, tmp_path, run):
    module = repeated(SUBTESTS_MODULE).replace(
        "\ndef test_cases", "\n@pytest.mark.repeat(2)\ndef test_cases"
    )
    (project / "test_grade.py").write_text(module)
    answers(project, slow_guard="fail-once")
    logs = tmp_path / "logs"
    run(project, "-p", "pytest_repeat", workers=2, logs=logs)
    document = grade_of(logs)
    assert document.gradable and document.reward == 0.0
    rows = {row.id: row for row in document.detail}
    assert set(rows) == {case["id"] for case in CASES}
    assert rows["slow-guard"].verdict == "fail"
    assert rows["slow-guard"].why.startswith("failed 1 of 2 repetitions")
    assert rows["fix-parser"].measures == {"repetitions": 2.0, "repetitions_passed": 2.0}


def test_two_tests_grading_one_case_say_what_to_write(project, tmp_path, run):
    with (project / "test_grade.py").open("a") as module:
        module.write("\n\ndef test_again(grade):\n    grade(CASES[0], read_case)\n")
    logs = tmp_path / "logs"
    run(project, logs=logs)
    document = grade_of(logs)
    assert not document.gradable
    text = refusal_text(document)
    assert "case fix-parser was graded by 2 tests (test_grade.py::test_case[fix-parser], " in text
    assert "repeat its test with pytest-repeat (--count N)" in text
