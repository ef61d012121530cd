"""Evidence, logs directories and sweeps written by runs we do not trust:
a FIFO, a symlink out of the run, a directory, /dev/zero where a file should
be, each answered in under 2 s with a refusal or a clean publish; nothing
read or written outside the run or the target; every sweep entry accounted
for."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.sweeps import make_sweep
from truereward import GradeDocument
from truereward.grading import GradeRequest, grade_request
from truereward.verify import verify_published

CLI = [sys.executable, "-m", "truereward"]
CASES = {"tests/test_app.py::test_fix": "fail_to_pass"}
#: CPU seconds: every answer here comes well within it. A hang (a read
#: blocked on a FIFO) uses no CPU: the wall-clock cap below catches it.
BOUND = 2.0
#: Wall seconds: far above any answer, so a loaded machine does not fail a
#: test, far below the subprocess timeout.
WALL = 20.0


def cli(*args: str, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run the command line with a hard timeout (a hang fails the test,
    never blocks it); return it and the CPU seconds it took, after checking
    that it answered within :data:`WALL` seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    ran = subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=30, cwd=cwd, check=False
    )
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert wall < WALL, (args, wall)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return ran, cpu


def plant(path: Path, kind: str, outside: Path) -> None:
    """Put a hostile thing at ``path``."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink-out":
        path.symlink_to(outside)
    elif kind == "directory":
        path.mkdir()
        (path / "inside").write_text("x")
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    else:
        raise ValueError(kind)


KINDS = ["fifo", "symlink-out", "directory", "dev-zero"]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Another run's passing report, which a link must never make ours."""
    other = tmp_path / "other-run"
    other.mkdir()
    report = other / "ctrf.json"
    report.write_text(
        json.dumps(
            {
                "reportFormat": "CTRF",
                "specVersion": "1.0.0",
                "results": {
                    "tool": {"name": "pytest"},
                    "summary": {
                        "tests": 1,
                        "passed": 1,
                        "failed": 0,
                        "skipped": 0,
                        "pending": 0,
                        "other": 0,
                        "start": 0,
                        "stop": 0,
                    },
                    "tests": [
                        {"name": "tests/test_app.py::test_fix", "status": "passed", "duration": 1}
                    ],
                },
            }
        )
    )
    return report


@pytest.mark.slow
@pytest.mark.parametrize("reader", ["ctrf", "junit"])
@pytest.mark.parametrize("kind", KINDS)
def test_hostile_evidence_is_refused_fast(
    tmp_path: Path, outside: Path, reader: str, kind: str
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    evidence = run / ("ctrf.json" if reader == "ctrf" else "junit.xml")
    plant(evidence, kind, outside)
    (run / "task.json").write_text(json.dumps({"cases": CASES}))
    logs = tmp_path / "logs"
    ran, took = cli(
        "grade", str(evidence), "--reader", reader, "--case-set", str(run / "task.json"),
        "--logs", str(logs), "--json",
    )  # fmt: skip
    assert took < BOUND, (kind, took)
    assert ran.returncode == 0, ran.stderr  # a grade: the refusal, published
    outcome = json.loads(ran.stdout)
    assert outcome["gradable"] is False and outcome["reward"] is None
    assert [item["code"] for item in outcome["refusals"]] == ["EVIDENCE_MALFORMED"]
    document = GradeDocument.from_bytes((logs / "grade.json").read_bytes())
    assert document.evidence == ()  # nothing was read: no digest of what it pointed at
    assert not (logs / "reward.txt").exists()


@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_state_path_fails_its_case_fast(tmp_path: Path, outside: Path, kind: str) -> None:
    from truereward import read

    state = tmp_path / "workspace"
    state.mkdir()
    plant(state / "answer.txt", kind, outside)
    (state / "fine.txt").write_text("hello")
    spec = {
        "cases": [
            {
                "id": "answer",
                "kind": "fail_to_pass",
                "options": {"path": "answer.txt", "contains": "x"},
            },
            {
                "id": "fine",
                "kind": "pass_to_pass",
                "options": {"path": "fine.txt", "text": "hello"},
            },
        ]
    }
    started = time.monotonic()
    rows = {row.id: row for row in read("state", str(state), spec)}
    assert time.monotonic() - started < BOUND
    assert rows["answer"].verdict == "fail" and rows["fine"].verdict == "pass"


def test_a_state_root_linked_out_of_the_run_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "answer.txt").write_text("42")
    sweep = tmp_path / "sweep"
    run = sweep / "r"
    run.mkdir(parents=True)
    (run / "workspace").symlink_to(elsewhere)
    (run / "task.json").write_text(
        json.dumps(
            {
                "reader": "state",
                "cases": [
                    {
                        "id": "a",
                        "kind": "fail_to_pass",
                        "options": {"path": "answer.txt", "text": "42"},
                    }
                ],
            }
        )
    )
    result = grade_request(GradeRequest(sweep=str(sweep), target=str(tmp_path / "out")))
    grade = json.loads((tmp_path / "out" / "r" / "grade.json").read_text())
    assert result.summary.gradable == 0
    assert [item["code"] for item in grade["refusals"]] == ["EVIDENCE_MALFORMED"]
    assert "symlink" in grade["refusals"][0]["why"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["grade.json", "ctrf.json", "reward.json", "reward.txt"])
@pytest.mark.parametrize("kind", KINDS)
def test_hostile_files_under_our_names_neither_hang_nor_stop_publishing(
    tmp_path: Path, outside: Path, name: str, kind: str
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        json.dumps({"id": "tests/test_app.py::test_fix", "kind": "fail_to_pass", "verdict": "fail"})
        + "\n"
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    plant(logs / name, kind, outside)
    before = outside.read_bytes()
    for attempt in range(2):  # a fresh publish, then a republish
        ran, took = cli("fold", str(rows), "--logs", str(logs))
        assert took < BOUND, (name, kind, attempt, took)
        assert ran.returncode == 0, ran.stderr
    assert outside.read_bytes() == before  # nothing written through a link
    document, found = verify_published(logs)
    assert found == [] and document.reward == 0.0
    assert (logs / "reward.txt").read_text() == "0.0\n"
    if kind == "directory":  # moved aside, not deleted
        aside = [entry for entry in os.listdir(logs) if entry.startswith(".set-aside.")]
        assert len(aside) == 1 and (logs / aside[0] / "inside").read_text() == "x"


@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_grade_json_does_not_hang_verify(
    tmp_path: Path, outside: Path, kind: str
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    plant(logs / "grade.json", kind, outside)
    ran, took = cli("verify", str(logs))
    assert took < BOUND and ran.returncode == 2, (took, ran.stderr)
    assert "not a regular file" in ran.stderr


def test_a_target_directory_that_is_a_symlink_is_never_written_through(tmp_path: Path) -> None:
    real = tmp_path / "elsewhere"
    real.mkdir()
    link = tmp_path / "logs"
    link.symlink_to(real)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"id": "a", "kind": "fail_to_pass", "verdict": "pass"}) + "\n")
    ran, took = cli("fold", str(rows), "--logs", str(link))
    assert took < BOUND and ran.returncode == 4, ran.stderr
    assert "symlink" in ran.stderr
    assert list(real.iterdir()) == []


def _sweep_with_hostile_entries(tmp_path: Path) -> tuple[Path, Path]:
    sweep = make_sweep(tmp_path / "sweep", {"ok": "pass", "fails": "fail"})
    etc = tmp_path / "etc"  # stands for /etc: nothing may ever be written there
    etc.mkdir()
    (sweep / "to-etc").symlink_to(etc)
    (sweep / "to-ok").symlink_to(sweep / "ok")  # a link to a run is not a run either
    for name in ("...", "back\\slash", "new\nline", "trailing "):
        (sweep / name).mkdir()  # directories whose names cannot be run ids
    (sweep / ".hidden").mkdir()
    # A run whose logs directory leads out of it.
    escape = make_sweep(sweep, {"escape": "pass"}) / "escape"
    (escape / "logs").symlink_to(etc)
    return sweep, etc


@pytest.mark.parametrize("target", ["default", "explicit"])
def test_a_sweep_with_entries_that_lead_outside_writes_nothing_outside(
    tmp_path: Path, target: str
) -> None:
    sweep, etc = _sweep_with_hostile_entries(tmp_path)
    out = tmp_path / "out"
    request = GradeRequest(sweep=str(sweep), target=str(out) if target == "explicit" else None)
    result = grade_request(request, sleep=lambda _: None)
    assert list(etc.iterdir()) == []  # nothing written through any link
    named = {item.entry: item.why for item in result.not_graded}
    assert set(named) == {
        "to-etc",
        "to-ok",
        "...",
        "back\\slash",
        "new\nline",
        "trailing ",
        ".hidden",
    }
    assert "symlink" in named["to-etc"] and "symlink" in named["to-ok"]
    graded = {line.run: line for line in result.runs}
    assert set(graded) == {"ok", "fails", "escape"}  # every other entry is accounted for
    if target == "default":
        # The run's logs/verifier leads to etc: not published there, and said.
        assert graded["escape"].state == "not published"
        assert any("leads out of the run" in item.why for item in result.failures)
    else:
        assert graded["escape"].state == "gradable"
        assert sorted(path.name for path in out.iterdir()) == ["escape", "fails", "ok"]


def test_a_listed_run_that_is_a_symlink_is_not_graded(tmp_path: Path) -> None:
    sweep = make_sweep(tmp_path / "sweep", {"ok": "pass"})
    (tmp_path / "link").symlink_to(sweep / "ok")
    result = grade_request(
        GradeRequest(runs=[str(tmp_path / "link"), str(sweep / "ok")], target=str(tmp_path / "o")),
        sleep=lambda _: None,
    )
    assert [item.entry for item in result.not_graded] == [str(tmp_path / "link")]
    assert [line.run for line in result.runs] == ["ok"]


def test_a_small_report_is_read_under_a_small_address_space(tmp_path: Path, outside: Path) -> None:
    """No read sizes its buffer by the limit: under a 100 MB address space
    (``ulimit -v 100000``) a 1 KiB report is graded, not refused with a
    MemoryError."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "task.json").write_text(json.dumps({"cases": CASES}))
    (run / "ctrf.json").write_bytes(outside.read_bytes())
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (100_000 * 1024, 100_000 * 1024))\n"
        "import truereward\n"
        "spec = truereward.TaskSpec.load(sys.argv[2])\n"
        "doc = truereward.grade_evidence('ctrf', sys.argv[1], spec)\n"
        "print(doc.gradable, doc.reward)\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code, str(run / "ctrf.json"), str(run / "task.json")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.split() == ["True", "1.0"]
