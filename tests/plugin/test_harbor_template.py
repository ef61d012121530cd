"""The Harbor task templates of ``samples/harbor-task`` (the verifier shares the agent's
container) and ``samples/harbor-task-separate`` (a verifier container of its own), as
shipped and as Harbor runs them.

As shipped: every pin of their Dockerfiles installs from PyPI, truereward is the wheel
``infra/harbor-wheel.sh`` builds from this clone, Harbor 0.26's ``harbor lint`` passes both,
and the two differ only where the verifier mode does.

As Harbor runs them: a real Harbor ``Job`` (``tests/support/harbor.py``,
``tests/support/harbor_driver.py``) with the ``nop`` agent in a stand-in sandbox runs each
variant's own verifier over a passing, a failing and an ungradable agent's end state, and reads
the reward with Harbor's own parser.

Scenario by scenario, each lays out what a trial's container holds at verification time, in
a temporary directory: ``tests/`` (a copy of the sample's ``tests/``, as Harbor copies it to
``/tests``), ``app/`` (the agent's work: the sample's ``count.py``, changed as the scenario's
agent left it) and ``logs/`` (``/logs/verifier``, with whatever the agent planted there).
Then ``bash tests/test.sh`` runs from ``app/`` with the environment variables the template
reads (``TESTS_DIR``, ``APP_DIR``, ``GRADE_LOGS``, ``TEST_TIMEOUT_SEC``), under the packages
the Dockerfile installs (pytest 8.4.1, pytest-json-ctrf 0.3.5, pytest-rerunfailures,
pytest-timeout, truereward's dependencies and the wheel built from this clone), installed into
a directory of their own, and no other pytest plugin (autoloading is off; the ones the
Dockerfile installs are named with ``-p``). What it leaves in ``logs/`` is checked with
``truereward verify`` and with Harbor 0.26's own reward parsing (``tests/support/harbor.py``).

The other tests run real sessions of the plugin beside the plugins verifiers use with
it: pytest-xdist, pytest-randomly, pytest-json-ctrf, pytest-rerunfailures and
pytest-timeout in one session, and the ``flaky`` package.
"""

from __future__ import annotations

import contextlib
import filecmp
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement

import truereward as tr
from tests.conftest import ROOT
from tests.support.harbor import TaskTrial, harbor_python, harbor_reward, harbor_run_tasks
from tests.support.installs import install_target
from truereward import GradeDocument
from truereward.verify import verify_published

SAMPLE = ROOT / "samples" / "harbor-task"
SEPARATE = ROOT / "samples" / "harbor-task-separate"
#: Each variant, and the Dockerfile of the image its verifier runs in.
VARIANTS = {"shared": (SAMPLE, "environment"), "separate": (SEPARATE, "tests")}
VENV_BIN = Path(sys.executable).parent
WHEEL = f"truereward-{tr.__version__}-py3-none-any.whl"
#: What the verifier's image installs beside pytest: truereward's dependencies.
RUNTIME = {
    "annotated-types",
    "defusedxml",
    "ijson",
    "orjson",
    "pydantic",
    "pydantic-core",
    "typing-extensions",
    "typing-inspection",
}
PIN = re.compile(r"\b([A-Za-z0-9_.-]+)==([0-9][A-Za-z0-9.]*)")

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


def verifier_dockerfile(variant: str) -> Path:
    """The Dockerfile of the image the variant's verifier runs in."""
    root, context = VARIANTS[variant]
    return root / context / "Dockerfile"


def dockerfile_pins(variant: str = "shared") -> dict[str, str]:
    """The ``name==version`` pins of the Dockerfile the variant's verifier runs in."""
    return dict(PIN.findall(verifier_dockerfile(variant).read_text()))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Copies of both samples with the wheel ``infra/harbor-wheel.sh`` builds from
    this clone in their build contexts, as a user runs it before ``harbor run``."""
    where = tmp_path_factory.mktemp("samples")
    for root, _ in VARIANTS.values():
        shutil.copytree(root, where / root.name)
    done = subprocess.run(
        ["bash", str(ROOT / "infra" / "harbor-wheel.sh"), str(where)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return where


@pytest.fixture(scope="module")
def pins(built: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What the verifier's image installs, into a directory of its own: every pin of
    the Dockerfile from PyPI, and truereward from the wheel built from this clone."""
    where = tmp_path_factory.mktemp("pins") / "site"
    for name, version in dockerfile_pins().items():
        install_target(f"{name}=={version}", where)
    install_target(str(built / SAMPLE.name / "environment" / WHEEL), where)
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


def image_env(pins: Path) -> dict[str, str]:
    """What the verifier's image puts in a command's environment: the Dockerfile's
    packages (``pins``) on the paths, and its pytest plugins, and no other (autoloading
    is off)."""
    return {
        "PATH": f"{pins / 'bin'}{os.pathsep}{VENV_BIN}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(pins),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTEST_ADDOPTS": "-p ctrf.main -p pytest_rerunfailures -p pytest_timeout",
    }


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
    image = image_env(pins)
    environment = {
        **os.environ,
        **image,
        "PYTHONPATH": os.pathsep.join(str(path) for path in (*front, pins)),
        "PYTEST_ADDOPTS": f"{image['PYTEST_ADDOPTS']} {addopts}",
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
    """Where Harbor 0.26 is installed (its venv, ``tests/support/harbor.py``)."""
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


@pytest.mark.parametrize("variant", VARIANTS)
def test_test_sh_is_harbors_template_but_for_its_pytest_line(variant: str) -> None:
    template = harbor_package() / "cli" / "template-task" / "pytest-tests" / "test.sh"
    root, _ = VARIANTS[variant]
    theirs, ours = commands(template.read_text()), commands((root / "tests/test.sh").read_text())
    assert len(theirs) == len(ours), ours
    changed = [(line, mine) for line, mine in zip(theirs, ours, strict=True) if line != mine]
    assert len(changed) == 1, changed
    ((line, mine),) = changed
    assert line == "if pytest --ctrf /logs/verifier/ctrf.json /tests/test_outputs.py -rA; then"
    # Every word of Harbor's line is kept, the plugin is named, and a failed session
    # ends the script before the template's `echo 0`; an ungradable one exits non-zero.
    assert set(line.removesuffix("; then").split()) <= set(mine.split())
    assert "-p truereward.plugin" in mine and "--ctrf /logs/verifier/ctrf.json" in mine
    assert re.search(r"--grade-exit-ungradable [1-9]", mine)
    assert mine.endswith(" || exit; then")


HARBOR_TASK = """\
import json, sys
from harbor.models.task.task import Task
from harbor.models.task.verifier_mode import resolve_task_verifier_mode
task = Task(sys.argv[1])
print(json.dumps({
    "test": str(task.paths.discovered_test_path),
    "verifier_timeout_sec": task.config.verifier.timeout_sec,
    "mode": resolve_task_verifier_mode(task.config).value,
    "artifacts": [str(getattr(entry, "source", entry)) for entry in task.config.artifacts],
    "verifier_env": task.config.verifier.env,
}))
"""


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_harbor_loads_each_variant_in_its_mode(variant: str) -> None:
    root, _ = VARIANTS[variant]
    done = subprocess.run(
        [str(harbor_python()), "-I", "-c", HARBOR_TASK, str(root)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert loaded == {
        "test": str(root / "tests" / "test.sh"),
        "verifier_timeout_sec": 900.0,
        "mode": variant,
        # Separate: the agent's /app reaches the verifier as an artifact, and the
        # verifier is told so (an /app that did not arrive is then ungradable).
        "artifacts": ["/app"] if variant == "separate" else [],
        "verifier_env": {"APP_FROM_ARTIFACTS": "1"} if variant == "separate" else {},
    }


def harbor_lint(*args: str) -> subprocess.CompletedProcess[str]:
    """Harbor 0.26's ``harbor lint`` (its console script, from its venv)."""
    return subprocess.run(
        [str(harbor_python().parent / "harbor"), "lint", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
        env={**os.environ, "HARBOR_TELEMETRY": "0"},
    )


@pytest.mark.slow
def test_harbor_lint_passes_both_variants() -> None:
    done = harbor_lint("--json", str(SAMPLE), str(SEPARATE))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == []


@pytest.mark.slow
def test_harbor_lint_flags_the_shared_verifier_the_sample_accepts() -> None:
    # The shared variant passes because its task.toml ignores this one rule, knowingly
    # ([metadata.harbor.lint]); selected again, lint flags it, and nothing else.
    done = harbor_lint("--json", "--extend-select", "shared-verifier", str(SAMPLE), str(SEPARATE))
    assert done.returncode == 1, done.stdout + done.stderr
    found = [(Path(item["path"]).parent.name, item["rule"]) for item in json.loads(done.stdout)]
    assert found == [("harbor-task", "shared-verifier")]


def test_the_dockerfiles_pin_harbors_versions_and_truereward_s_locked_dependencies() -> None:
    pinned = dockerfile_pins()
    assert set(pinned) == {
        "pytest",
        "pytest-json-ctrf",
        "pytest-rerunfailures",
        "pytest-timeout",
        *RUNTIME,
    }
    template = harbor_package() / "cli" / "template-task" / "pytest-tests" / "Dockerfile"
    harbors = dict(PIN.findall(template.read_text()))
    assert harbors == {"pytest": "8.4.1", "pytest-json-ctrf": "0.3.5"}
    assert {name: pinned[name] for name in harbors} == harbors
    lock = dict(PIN.findall((ROOT / "infra" / "lock.txt").read_text()))
    assert {name: pinned[name] for name in RUNTIME} == {name: lock[name] for name in RUNTIME}
    # truereward's own requirements are exactly what is pinned beside it.
    required = {
        Requirement(line).name
        for line in metadata.requires("truereward") or []
        if "extra ==" not in line
    }
    assert required <= RUNTIME
    # Both verifier images install the same packages.
    assert dockerfile_pins("separate") == pinned


@pytest.mark.parametrize("variant", VARIANTS)
def test_truereward_is_the_wheel_built_from_this_clone_never_a_pypi_version(variant: str) -> None:
    text = verifier_dockerfile(variant).read_text()
    assert "truereward==" not in text and "truereward>" not in text
    # Copied from the build context (where infra/harbor-wheel.sh puts it) and installed.
    assert re.search(rf"^COPY {re.escape(WHEEL)} /tmp/$", text, re.MULTILINE), text
    assert f"    /tmp/{WHEEL} \\\n" in text
    context = verifier_dockerfile(variant).parent / WHEEL
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", "-q", str(context.relative_to(ROOT))],
        cwd=ROOT,
        check=False,
    )
    assert ignored.returncode == 0, f"{context} is not git-ignored"


@pytest.mark.slow
def test_the_wheel_script_builds_the_wheel_the_dockerfiles_install(built: Path) -> None:
    for root, context in VARIANTS.values():
        wheels = sorted(path.name for path in (built / root.name / context).glob("*.whl"))
        assert wheels == [WHEEL]
    wheel = built / SAMPLE.name / "environment" / WHEEL
    assert filecmp.cmp(wheel, built / SEPARATE.name / "tests" / WHEEL, shallow=False)


@pytest.mark.slow
def test_every_pin_installs_from_pypi_and_the_image_needs_nothing_else(pins: Path) -> None:
    installed = {
        dist.metadata["Name"].lower().replace("_", "-"): dist
        for dist in metadata.distributions(path=[str(pins)])
    }
    wanted = {**dockerfile_pins(), "truereward": tr.__version__}
    assert {name: installed[name].version for name in wanted} == wanted
    # Every requirement of what the image installs is installed, at a version it
    # accepts (pytest's own dependencies come from pip's resolver in the image, as
    # in Harbor's template: here from this venv).
    for name, dist in installed.items():
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is not None and not requirement.marker.evaluate(
                {"extra": "", "python_version": "3.12"}
            ):
                continue
            key = requirement.name.lower().replace("_", "-")
            if key in installed:
                assert requirement.specifier.contains(installed[key].version, prereleases=True), (
                    f"{name} needs {requirement}, the image has {installed[key].version}"
                )
            elif name in ("truereward", *RUNTIME):
                raise AssertionError(f"{name} needs {requirement}, which the image lacks")


def test_the_variants_differ_only_where_the_verifier_mode_does() -> None:
    same = [
        "instruction.md",
        "solution/solve.sh",
        "environment/count.py",
        "tests/task.json",
        "tests/test_outputs.py",
    ]
    for name in same:
        assert (SAMPLE / name).read_bytes() == (SEPARATE / name).read_bytes(), name
    shared_sh, separate_sh = (
        commands((root / "tests" / "test.sh").read_text()) for root in (SAMPLE, SEPARATE)
    )
    assert shared_sh == separate_sh

    def listing(root: Path) -> set[str]:
        return {
            str(path.relative_to(root))
            for path in root.rglob("*")
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".whl"
        }

    # Separate mode adds the verifier's image; task.toml and both Dockerfiles differ.
    assert listing(SEPARATE) - listing(SAMPLE) == {"tests/Dockerfile"}
    assert listing(SAMPLE) - listing(SEPARATE) == set()
    # The agent's image of the separate variant installs nothing for the verifier.
    assert "pip install" not in (SEPARATE / "environment" / "Dockerfile").read_text()


def test_the_doc_shows_the_pytest_line_and_the_pins_as_they_are() -> None:
    doc = (ROOT / "docs" / "harbor.md").read_text()
    (line,) = [
        line for line in commands((SAMPLE / "tests" / "test.sh").read_text()) if "pytest" in line
    ]
    assert f"```bash\n{line}\n```" in doc
    shown = dict(re.findall(r"`([A-Za-z0-9_.-]+)==([0-9][A-Za-z0-9.]*)`", doc))
    assert shown == dockerfile_pins()
    assert f"`{WHEEL}`" in doc


# --- each variant's verifier, as Harbor runs it ----------------------------------------------


def broken_copy(task: Path, where: Path) -> Path:
    """The task with one case its verifier cannot measure (no ``expect`` for
    ``empty-input``): the task's fault, so the run is ungradable."""
    copy = where / f"{task.name}-broken"
    shutil.copytree(task, copy)
    spec = json.loads((copy / "tests" / "task.json").read_text())
    (case,) = [case for case in spec["cases"] if case["id"] == "empty-input"]
    del case["options"]["expect"]
    (copy / "tests" / "task.json").write_text(json.dumps(spec))
    return copy


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_harbor_runs_each_variant_s_verifier_and_reads_its_reward(
    variant: str, built: Path, pins: Path, tmp_path: Path
) -> None:
    task = built / VARIANTS[variant][0].name
    solved, unsolved = tmp_path / "solved", tmp_path / "unsolved"
    agent_output(solved, solved=True)
    agent_output(unsolved, solved=False)
    scenarios: dict[str, tuple[Path, Path | None]] = {
        "passing": (task, solved),
        "failing": (task, unsolved),
        "ungradable": (broken_copy(task, tmp_path), solved),
        "no /app": (task, None),  # the agent's container has no /app at all
    }
    kept = {name: tmp_path / "kept" / str(index) for index, name in enumerate(scenarios)}
    trials = harbor_run_tasks(
        [
            TaskTrial(task_dir=task_dir, app=app, env=image_env(pins), keep=kept[name])
            for name, (task_dir, app) in scenarios.items()
        ]
    )
    got = dict(zip(scenarios, trials, strict=True))
    graded: dict[str, GradeDocument] = {}
    for name in got:
        graded[name], found = verify_published(kept[name])
        assert found == [], (name, found)
        stdout = (kept[name] / "test-stdout.txt").read_text()
        # Separate mode: the verifier ran in a sandbox of its own, not the agent's.
        assert ("__verifier/tests" in stdout) == (variant == "separate"), stdout[:400]

    # Harbor's parser read the reward truereward published; test.sh's exit status
    # (which Harbor ignores) says the same.
    assert got["passing"]["rewards"] == {"reward": 1.0} and got["passing"]["test_exit"] == 0
    assert got["failing"]["rewards"] == {"reward": 0.0} and got["failing"]["test_exit"] == 1
    assert graded["passing"].reward == 1.0 and graded["failing"].reward == 0.0

    # A case the verifier cannot measure: no reward at all (never a 0), exit 6.
    ungradable = got["ungradable"]
    assert ungradable["rewards"] is None and ungradable["reward_valid"] is False
    assert ungradable["exception"] == "RewardFileNotFoundError"
    assert ungradable["test_exit"] == 6
    assert [(item.code, item.case, item.blame.value) for item in graded["ungradable"].refusals] == [
        ("CASE_NOT_PREPARED", "empty-input", "grader")
    ]

    # No /app: in the agent's own container, its missing program is its failure; in
    # a separate verifier, nothing arrived, which the verifier cannot grade.
    missing = got["no /app"]
    if variant == "shared":
        assert missing["rewards"] == {"reward": 0.0} and missing["test_exit"] == 1
        rows = graded["no /app"].detail
        assert {row.verdict for row in rows} == {"fail"}
        assert all(re.fullmatch(r"no /.*/app/count\.py", row.why) for row in rows), rows
    else:
        assert missing["rewards"] is None and missing["exception"] == "RewardFileNotFoundError"
        assert missing["test_exit"] == 6
        refusals = graded["no /app"].refusals
        assert {(item.code, item.blame.value) for item in refusals} == {
            ("EVIDENCE_UNREADABLE", "grader")
        }
        assert len(refusals) == len(CASE_KINDS)
        assert "did not reach the verifier" in refusals[0].why


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
