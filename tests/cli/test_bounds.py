"""Every input bounded: task specs of any format refused for their run (deep,
huge, too many cases, a parser that raises), the rest of the sweep graded;
every file the command line reads through the one safe reader; case sets,
rows files and grade documents bounded so that a maximal case set grades in
seconds and under 300 MB and its grade.json is one ``truereward verify``
reads. Time and memory are measured in a fresh process (:mod:`tests.support.peak`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.peak import BUDGET_MB, cli_code, measured
from truereward import GradeDocument, Ungradable
from truereward.checks.casefile import MAX_CASE_BYTES, read_cases
from truereward.grading import GradeRequest, grade_request
from truereward.readers.rows import MAX_LINE_BYTES, MAX_ROWS_BYTES, MAX_VALUES
from truereward.record.cases import MAX_CASE_SET_BYTES, MAX_CASES
from truereward.record.taskspec import MAX_SPEC_BYTES
from truereward.util.safefile import LIMIT

CLI = [sys.executable, "-m", "truereward"]
#: Wall seconds any refusal here comes within, on a loaded two-core machine.
WALL = 20.0
OK_CASE = "tests/test_app.py::test_fix"

GRADE_SWEEP = """
import json, sys
from truereward.grading import GradeRequest, grade_request
request = GradeRequest.model_validate(
    {"sweep": sys.argv[1], "target": sys.argv[2], "case_set": sys.argv[3], "max_attempts": 1}
)
result = grade_request(request)
lines = {line.run: [line.state, line.reward, line.codes, line.why] for line in result.runs}
print(json.dumps(lines))
"""


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def ids(count: int) -> list[str]:
    return [f"t{index}" for index in range(count)]


#: Task specs in JSON that no run may make the grader choke on: (file
#: content, what the refusal says).
JSON_SPECS: dict[str, tuple[bytes, str]] = {
    "deep": (nested(100_000).encode(), "nested too deeply"),
    "deep-options": (
        json.dumps({"cases": {OK_CASE: "fail_to_pass"}, "options": {"x": []}})
        .replace("[]", nested(900))
        .encode(),
        "nests deeper than 64 levels",
    ),
    "many": (
        json.dumps({"cases": dict.fromkeys(ids(500_000), "fail_to_pass")}).encode(),
        f"declares 500000 cases, more than the {MAX_CASES}",
    ),
    "many-listed": (  # as many as fit in a spec when listed this way
        json.dumps([{"id": item, "kind": "pass_to_pass"} for item in ids(350_000)]).encode(),
        f"declares 350000 cases, more than the {MAX_CASES}",
    ),
    "swebench-string": (
        json.dumps({"FAIL_TO_PASS": json.dumps(ids(500_000)), "PASS_TO_PASS": "[]"}).encode(),
        f"declares 500000 cases, more than the {MAX_CASES}",
    ),
    "swebench-deep-string": (
        json.dumps({"FAIL_TO_PASS": nested(100_000)}).encode(),
        "FAIL_TO_PASS: not a JSON list of test ids: JSON nested too deeply",
    ),
    "swebench-deep-list": (
        json.dumps({"FAIL_TO_PASS": []}).replace("[]", nested(900)).encode(),
        "nests deeper than 64 levels",
    ),
    "long-ids": (
        json.dumps(
            {"cases": {f"t{index}" + "\U0001f600" * 500: "pass_to_pass" for index in range(5_000)}},
            ensure_ascii=False,
        ).encode(),
        f"more than the {MAX_CASE_SET_BYTES} bytes the ids of a case set may take",
    ),
    "huge": (
        b'{"cases": {}, "x": "' + b"x" * (40 << 20) + b'"}',
        f"more than the {MAX_SPEC_BYTES}",
    ),
}

#: The same in TOML.
TOML_SPECS: dict[str, tuple[bytes, str]] = {
    "deep": (b"x = " + nested(100_000).encode(), "nested too deeply to parse"),
    "deep-table": (b"x = " + b"{a = " * 100_000 + b"1" + b"}" * 100_000, "nested too deeply"),
    "many": (
        b"[cases]\n" + "".join(f'{item} = "fail_to_pass"\n' for item in ids(500_000)).encode(),
        f"declares 500000 cases, more than the {MAX_CASES}",
    ),
    "long-integer": (b"x = " + b"9" * 5_000, "Exceeds the limit (4300 digits)"),
    "huge": (b'x = "' + b"x" * (40 << 20) + b'"', f"more than the {MAX_SPEC_BYTES}"),
}


def make_runs(root: Path, name: str, specs: dict[str, tuple[bytes, str]]) -> None:
    """A sweep with one valid run (``ok``) and one run per hostile spec,
    each spec written as ``name``; every run has passing rows."""
    rows = json.dumps({"id": OK_CASE, "kind": "fail_to_pass", "verdict": "pass"}) + "\n"
    valid = {"reader": "rows", "cases": {OK_CASE: "fail_to_pass"}}
    for run, (content, _) in {"ok": (b"", ""), **specs}.items():
        directory = root / run
        directory.mkdir(parents=True)
        (directory / "rows.jsonl").write_text(rows)
        if run == "ok":
            text = (
                json.dumps(valid)
                if name.endswith(".json")
                else (f'reader = "rows"\n[cases]\n"{OK_CASE}" = "fail_to_pass"\n')
            )
            (directory / name).write_text(text)
        else:
            (directory / name).write_bytes(content)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["task.json", "task.toml"])
def test_hostile_task_specs_are_refused_for_their_run_and_the_sweep_is_graded(
    tmp_path: Path, name: str
) -> None:
    specs = JSON_SPECS if name.endswith(".json") else TOML_SPECS
    sweep = tmp_path / "sweep"
    make_runs(sweep, name, specs)
    ran = measured(GRADE_SWEEP, str(sweep), str(tmp_path / "out"), name)
    assert ran.returncode == 0, ran.stderr[-3000:]
    print(f"{name}: {len(specs)} hostile specs, {ran.seconds:.1f} s, peak {ran.peak_mb:.0f} MB")
    assert ran.peak_mb < BUDGET_MB
    assert ran.seconds < 20 * len(specs)  # each refused in seconds, not minutes
    lines = json.loads(ran.stdout)
    assert lines.pop("ok")[:3] == ["gradable", 1.0, []]
    assert set(lines) == set(specs)
    for run, (state, reward, codes, why) in lines.items():
        assert (state, reward, codes) == ("ungradable", None, ["CASE_INVALID"]), run
        assert name in why and specs[run][1] in why, (run, why)


def test_a_hostile_spec_beside_valid_runs_in_one_read_leaves_them_graded(tmp_path: Path) -> None:
    """In one process, through ``grade_request``: the deep TOML that raised
    ``RecursionError`` out of the whole sweep is its run's refusal."""
    sweep = tmp_path / "sweep"
    make_runs(sweep, "task.toml", {"deep": TOML_SPECS["deep"]})
    make_runs(tmp_path / "more", "task.toml", {})
    (tmp_path / "more" / "ok").rename(sweep / "zz-ok")
    result = grade_request(
        GradeRequest(sweep=str(sweep), target=str(tmp_path / "out"), case_set="task.toml"),
        sleep=lambda _: None,
    )
    outcome = {line.run: (line.reward, line.codes) for line in result.runs}
    assert outcome == {"ok": (1.0, []), "zz-ok": (1.0, []), "deep": (None, ["CASE_INVALID"])}


def test_an_unexpected_exception_reading_one_run_is_that_run_s_refusal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever goes wrong while reading a run (here a bug injected where
    the reader is chosen) becomes that run's CASE_NOT_GRADED; its
    neighbours are graded."""
    from truereward.grading import reading

    sweep = tmp_path / "sweep"
    make_runs(sweep, "task.json", {})
    make_runs(tmp_path / "b", "task.json", {})
    (tmp_path / "b" / "ok").rename(sweep / "bug")
    make_runs(tmp_path / "c", "task.json", {})
    (tmp_path / "c" / "ok").rename(sweep / "zz")
    chosen = reading.reader_and_evidence

    def buggy(job: Any, spec: Any) -> Any:
        if job.run == "bug":
            raise KeyError("a bug")
        return chosen(job, spec)

    monkeypatch.setattr(reading, "reader_and_evidence", buggy)
    result = grade_request(
        GradeRequest(sweep=str(sweep), target=str(tmp_path / "out"), max_attempts=2),
        sleep=lambda _: None,
    )
    outcome = {line.run: (line.reward, line.codes, line.attempts) for line in result.runs}
    assert outcome == {
        "ok": (1.0, [], 1),
        "zz": (1.0, [], 1),
        "bug": (None, ["CASE_NOT_GRADED"], 2),  # the grader's, so tried again
    }
    why = json.loads((tmp_path / "out" / "bug" / "grade.json").read_text())["refusals"][0]["why"]
    assert why == "reading run bug failed: KeyError: 'a bug'"


# The command line's inputs ---------------------------------------------------


def cli(*args: str, cwd: Path | None = None, stdin: Any = None) -> subprocess.CompletedProcess[str]:
    """The command line, with a hard timeout: a hang fails the test."""
    started = time.monotonic()
    ran = subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=60, cwd=cwd, stdin=stdin, check=False
    )
    assert time.monotonic() - started < WALL, args
    return ran


def plant(path: Path, kind: str, outside: Path) -> str:
    """A hostile thing at ``path``; what the refusal calls it."""
    if kind == "fifo":
        os.mkfifo(path)
        return "a FIFO"
    if kind == "device":
        path.symlink_to("/dev/zero")
        return "a symlink"
    if kind == "symlink-out":
        path.symlink_to(outside)
        return "a symlink"
    if kind == "directory":
        path.mkdir()
        return "a directory"
    raise ValueError(kind)


@pytest.fixture
def passing(tmp_path: Path) -> dict[str, Path]:
    """Another run's passing rows and case set, outside the run: what a
    link must never make ours."""
    other = tmp_path / "other"
    other.mkdir()
    rows = other / "rows.jsonl"
    rows.write_text(json.dumps({"id": OK_CASE, "kind": "fail_to_pass", "verdict": "pass"}) + "\n")
    case_set = other / "task.json"
    case_set.write_text(json.dumps({"cases": {OK_CASE: "fail_to_pass"}}))
    return {"rows": rows, "case_set": case_set}


#: Each command, and the argument list with HOSTILE where the hostile
#: input goes (ROWS and CASES name valid files).
COMMANDS: dict[str, list[str]] = {
    "fold rows": ["fold", "HOSTILE", "--case-set", "CASES", "--logs", "LOGS"],
    "fold --case-set": ["fold", "ROWS", "--case-set", "HOSTILE", "--logs", "LOGS"],
    "fold --evidence": ["fold", "ROWS", "--evidence", "HOSTILE", "--logs", "LOGS"],
    "grade --case-set": [
        "grade",
        "ROWS",
        "--reader",
        "rows",
        "--case-set",
        "HOSTILE",
        "--logs",
        "LOGS",
    ],
    "checks score": ["checks", "score", "HOSTILE"],
    "checks compare": ["checks", "compare", "HOSTILE", "HOSTILE"],
    "calibrate score": ["calibrate", "score", "HOSTILE"],
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["fifo", "device", "symlink-out", "directory"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_cli_input_is_read_safely(
    tmp_path: Path, passing: dict[str, Path], command: str, kind: str
) -> None:
    hostile = tmp_path / "hostile.json"
    what = plant(hostile, kind, passing["rows"] if "rows" in command else passing["case_set"])
    values = {
        "HOSTILE": str(hostile),
        "ROWS": str(passing["rows"]),
        "CASES": str(passing["case_set"]),
        "LOGS": str(tmp_path / "logs"),
    }
    ran = cli(*(values.get(item, item) for item in COMMANDS[command]))
    assert ran.returncode == 2, ran.stderr
    assert str(hostile) in ran.stderr and what in ran.stderr, ran.stderr
    assert not (tmp_path / "logs").exists()  # nothing published
    if kind == "fifo" and command in ("fold rows", "checks score", "calibrate score"):
        assert "give '-'" in ran.stderr  # a pipe's bytes go to standard input


@pytest.mark.slow
def test_rows_through_a_symlink_out_are_no_longer_published_as_1(
    tmp_path: Path, passing: dict[str, Path]
) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.symlink_to(passing["rows"])
    ran = cli(
        "fold", str(rows), "--case-set", str(passing["case_set"]), "--logs", str(tmp_path / "l")
    )
    assert ran.returncode == 2 and "a symlink" in ran.stderr
    assert not (tmp_path / "l").exists()
    # Piped to standard input, the same rows are read (and not digested as a file).
    with passing["rows"].open("rb") as stdin:
        ran = cli(
            "fold", "-", "--case-set", str(passing["case_set"]), "--logs", str(tmp_path / "l"),
            stdin=stdin,
        )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert (tmp_path / "l" / "reward.txt").read_text() == "1.0\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [["fold", "-", "--logs", "LOGS"], ["checks", "score", "-"], ["calibrate", "score", "-"]],
    ids=["fold", "checks-score", "calibrate-score"],
)
def test_endless_standard_input_is_refused_in_bounded_memory(
    tmp_path: Path, args: list[str]
) -> None:
    logs = str(tmp_path / "logs")
    with open("/dev/zero", "rb") as zero:
        ran = measured(cli_code(), *(logs if item == "LOGS" else item for item in args), stdin=zero)
    print(f"{args[:2]}: {ran.seconds:.1f} s, peak {ran.peak_mb:.0f} MB")
    assert ran.returncode == 2, ran.stderr[-2000:]
    assert ran.peak_mb < BUDGET_MB and ran.seconds < WALL
    if args[0] == "checks":
        assert f"a case longer than {MAX_CASE_BYTES} bytes" in ran.stderr
    else:
        assert f"<stdin>: refused: more than the {LIMIT} bytes allowed" in ran.stderr
    assert not os.path.exists(logs)


# Counts and sizes --------------------------------------------------------------


@pytest.mark.slow
def test_the_command_line_refuses_a_case_set_or_rows_over_the_bounds(tmp_path: Path) -> None:
    many = tmp_path / "many.json"
    many.write_text(json.dumps(dict.fromkeys(ids(500_000), "fail_to_pass")))
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        "".join(
            json.dumps({"id": item, "kind": "fail_to_pass", "verdict": "pass"}) + "\n"
            for item in ids(MAX_CASES + 1)
        )
    )
    small = tmp_path / "small.json"
    small.write_text(json.dumps({"t0": "fail_to_pass"}))
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps({"id": "t0", "kind": "fail_to_pass", "verdict": "pass"}) + "\n")
    logs = str(tmp_path / "logs")
    for args, said in [
        (["fold", str(one), "--case-set", str(many)], "declares 500000 cases, more than the 10000"),
        (["grade", str(one), "--reader", "rows", "--case-set", str(many)], "declares 500000"),
        (["fold", str(rows), "--case-set", str(small)], f"more than the {MAX_CASES} rows"),
    ]:
        ran = cli(*args, "--logs", logs)
        assert ran.returncode == 2 and said in ran.stderr, ran.stderr
    assert not os.path.exists(logs)


@pytest.mark.slow
def test_rows_files_are_bounded_in_lines_values_and_size(tmp_path: Path) -> None:
    from truereward import read

    row = {"id": "t0", "kind": "fail_to_pass", "verdict": "pass"}
    cases = {"t0": "fail_to_pass"}
    long_line = json.dumps({**row, "why": "x" * MAX_LINE_BYTES})
    dense = json.dumps({**row, "observations": [{"name": "a", "verdict": "b"}] * 30_000})
    for content, said in [
        (long_line, f"more than the {MAX_LINE_BYTES} bytes a row may have"),
        ("\n".join([dense] * 6), f"more than the {MAX_VALUES} JSON values"),
        ("\n" * (MAX_ROWS_BYTES + 1), f"more than the {MAX_ROWS_BYTES} bytes a rows file"),
    ]:
        path = tmp_path / "rows.jsonl"
        path.write_text(content)
        with pytest.raises(Ungradable) as refused:
            read("rows", str(path), cases)
        assert refused.value.code == "EVIDENCE_MALFORMED" and said in refused.value.why
    # Within the bounds, a row's long text and long lists are cut, never its verdict.
    many = [{"name": "a", "verdict": "b"}] * 500
    path.write_text(json.dumps({**row, "why": "y" * 100_000, "observations": many}))
    (got,) = read("rows", str(path), cases)
    assert got.verdict == "pass" and len(got.why) <= 2000 and got.why.endswith("characters cut]")
    assert (
        len(got.observations) == 20 and got.observations[-1].why == "481 more observations left out"
    )


@pytest.mark.slow
def test_a_long_case_in_a_case_file_ends_the_read(tmp_path: Path) -> None:
    import io

    ok = b'{"actual": "a", "checks": []}\n'
    cases = list(read_cases(io.BytesIO(ok + b"x" * (MAX_CASE_BYTES + 10) + b"\n" + ok)))
    assert [case.text is not None for case in cases] == [True, False]
    assert "the rest of the file was not read" in (cases[1].problem or "")
    cases = list(read_cases(io.BytesIO(b'[{"a": "' + b"x" * (MAX_CASE_BYTES + 10) + b'"}]')))
    assert "a case longer than" in (cases[-1].problem or "")


MAXIMAL = """
import json, sys, time
from truereward.grading import GradeRequest, grade_request
started = time.monotonic()
result = grade_request(GradeRequest.model_validate({"sweep": sys.argv[1], "target": sys.argv[2]}))
print(json.dumps({"seconds": time.monotonic() - started,
                  "lines": [[line.run, line.reward, line.codes] for line in result.runs]}))
"""


def maximal_run(root: Path, run: str, count: int, id_char: str = "p") -> None:
    """A run declaring ``count`` cases of 512-character ids, with a JUnit
    report in which each fails with a long message: rows with as much text
    as the readers make."""
    directory = root / run
    directory.mkdir(parents=True)
    cases = []
    with (directory / "junit.xml").open("w", encoding="utf-8") as report:
        report.write("<testsuites><testsuite name='s'>\n")
        for index in range(count):
            stem = f"tests/m{index:05d}_"
            case_id = f"{stem}{id_char * (512 - len(stem) - len('.py::test_x'))}.py::test_x"
            cases.append({"id": case_id, "kind": "fail_to_pass" if index % 2 else "pass_to_pass"})
            classname = case_id.split(".py::")[0].replace("/", ".")
            report.write(
                f'<testcase classname="{classname}" name="test_x" time="0.1">'
                f'<failure type="AssertionError" message="{"m" * 700}"/></testcase>\n'
            )
        report.write("</testsuite></testsuites>\n")
    spec = {"cases": cases, "reader": "junit", "evidence": "junit.xml"}
    (directory / "task.json").write_text(json.dumps(spec, ensure_ascii=False), encoding="utf-8")


@pytest.mark.slow
def test_a_maximal_case_set_grades_within_the_bounds_and_verifies(tmp_path: Path) -> None:
    sweep, out = tmp_path / "sweep", tmp_path / "out"
    maximal_run(sweep, "ascii", MAX_CASES)
    # Ids of four-byte characters: as many as their 8 MiB allow.
    maximal_run(sweep, "wide", MAX_CASE_SET_BYTES // (4 * 512 + 32), id_char="\U0001f600")
    ran = measured(MAXIMAL, str(sweep), str(out))
    assert ran.returncode == 0, ran.stderr[-3000:]
    outcome = json.loads(ran.stdout)
    sizes = {run: (out / run / "grade.json").stat().st_size for run in ("ascii", "wide")}
    print(f"maximal: {outcome['seconds']:.1f} s, peak {ran.peak_mb:.0f} MB, grade.json {sizes}")
    assert ran.peak_mb < BUDGET_MB
    assert outcome["seconds"] < 30
    assert sorted(outcome["lines"]) == [["ascii", 0.0, []], ["wide", 0.0, []]]
    assert all(size < LIMIT for size in sizes.values())
    verified = cli("verify", str(out))
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "2 runs, 2 consistent" in verified.stdout
    document = GradeDocument.from_bytes((out / "ascii" / "grade.json").read_bytes())
    assert len(document.detail) == MAX_CASES
    assert all(len(row.why) < 600 for row in document.detail)  # the message, cut at 500


@pytest.mark.slow
def test_a_case_set_one_over_the_bound_is_refused_in_seconds(tmp_path: Path) -> None:
    sweep, out = tmp_path / "sweep", tmp_path / "out"
    maximal_run(sweep, "over", MAX_CASES + 1)
    ran = measured(MAXIMAL, str(sweep), str(out))
    assert ran.returncode == 0, ran.stderr[-3000:]
    outcome = json.loads(ran.stdout)
    assert outcome["lines"] == [["over", None, ["CASE_INVALID"]]]
    assert ran.peak_mb < BUDGET_MB and outcome["seconds"] < 10
    why = json.loads((out / "over" / "grade.json").read_text())["refusals"][0]["why"]
    assert f"declares {MAX_CASES + 1} cases, more than the {MAX_CASES}" in why
