"""The command line: fold, verify, schema, codes; bad input never a traceback."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from truereward import grade_document
from truereward.cli import main
from truereward.cli.common import number
from truereward.schemas import load


def write_rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "truereward", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_fold_publishes_and_verify_agrees(row, tmp_path, capsys):
    rows = write_rows(tmp_path / "rows.jsonl", [row("a"), row("g", "pass_to_pass")])
    logs = tmp_path / "logs"
    assert main(["fold", str(rows), "--logs", str(logs)]) == 0
    out = capsys.readouterr().out
    assert "gradable: reward 1.0 (gated-binary/1)" in out and "(create)" in out
    assert (logs / "reward.txt").read_text() == "1.0\n"
    assert main(["verify", str(logs)]) == 0
    assert "consistent" in capsys.readouterr().out
    assert main(["verify", str(logs / "grade.json")]) == 0


def test_fold_twice_is_idempotent(row, tmp_path, capsys):
    rows = write_rows(tmp_path / "rows.jsonl", [row("a")])
    assert main(["fold", str(rows), "--logs", str(tmp_path / "l")]) == 0
    assert main(["fold", str(rows), "--logs", str(tmp_path / "l")]) == 0
    assert "(same)" in capsys.readouterr().out


def test_fold_with_case_set_reports_missing_cases(row, tmp_path, capsys):
    rows = write_rows(tmp_path / "rows.jsonl", [row("a")])
    case_set = tmp_path / "task.json"
    case_set.write_text(
        json.dumps([{"id": "a", "kind": "fail_to_pass"}, {"id": "b", "kind": "pass_to_pass"}])
    )
    assert (
        main(["fold", str(rows), "--case-set", str(case_set), "--logs", str(tmp_path / "l")]) == 0
    )
    assert "ungradable: CASES_MISSING (grader)" in capsys.readouterr().out
    assert not (tmp_path / "l" / "reward.txt").exists()


@pytest.mark.parametrize("weight", [5e-324, 1e308])
def test_fold_with_tiny_or_huge_weights_publishes_their_mean(row, tmp_path, capsys, weight):
    # Float sums gave 0.5 for 5e-324 and an OverflowError (exit 70, nothing
    # published) for 1e308; the mean of 0.5 and 1.0 is 0.75 whatever the weight.
    rows = write_rows(tmp_path / "rows.jsonl", [row("a", measures={"score": 0.5}), row("b")])
    case_set = tmp_path / "task.json"
    cases = [{"id": case, "kind": "fail_to_pass", "weight": weight} for case in "ab"]
    case_set.write_text(json.dumps({"cases": cases, "scoring": {"scheme": "weighted-mean/1"}}))
    logs = tmp_path / "l"
    assert main(["fold", str(rows), "--case-set", str(case_set), "--logs", str(logs)]) == 0
    assert "gradable: reward 0.75 (weighted-mean/1)" in capsys.readouterr().out
    assert (logs / "reward.txt").read_text().strip() == "0.75"


def test_fold_with_toml_case_set(row, tmp_path):
    rows = write_rows(tmp_path / "rows.jsonl", [row("a")])
    (tmp_path / "task.toml").write_text('[cases]\na = "fail_to_pass"\n')
    assert (
        main(
            [
                "fold",
                str(rows),
                "--case-set",
                str(tmp_path / "task.toml"),
                "--logs",
                str(tmp_path / "l"),
                "--json",
            ]
        )
        == 0
    )


def test_conflicting_fold_exits_3_and_replaces_works(row, tmp_path, capsys):
    logs = str(tmp_path / "l")
    rows = write_rows(tmp_path / "one.jsonl", [row("a"), row("b", verdict="fail")])
    assert main(["fold", str(rows), "--logs", logs, "--json"]) == 0
    digest = json.loads(capsys.readouterr().out)["digest"]
    # Another grade of the same evidence (another scheme): a conflict.
    again = ["fold", str(rows), "--logs", logs, "--scheme", "fix-rate/1"]
    assert main(again) == 3
    assert "already published" in capsys.readouterr().err
    assert main([*again, "--replaces", digest]) == 0
    assert (tmp_path / "l" / "reward.txt").read_text() == "0.5\n"  # fix-rate/1: 1 of 2


def test_a_grade_not_read_from_this_evidence_is_replaced(row, tmp_path, capsys):
    """A grade.json standing in the logs directory that was read from other
    evidence (or planted, or stale) is not this evidence's grade: the new
    grade replaces it, and says so."""
    logs = tmp_path / "l"
    first = write_rows(tmp_path / "one.jsonl", [row("a")])
    second = write_rows(tmp_path / "two.jsonl", [row("a", verdict="fail")])
    assert main(["fold", str(first), "--logs", str(logs)]) == 0
    assert main(["fold", str(second), "--logs", str(logs)]) == 0
    assert "it records no reading of" in capsys.readouterr().err
    assert (logs / "reward.txt").read_text() == "0.0\n"
    # The same file changed since it was graded: the old grade is stale.
    write_rows(second, [row("a")])
    assert main(["fold", str(second), "--logs", str(logs)]) == 0
    assert "was not read from" in capsys.readouterr().err
    assert (logs / "reward.txt").read_text() == "1.0\n"


def test_a_planted_grade_and_reward_never_stand(row, tmp_path, capsys):
    logs = tmp_path / "l"
    logs.mkdir()
    forged = grade_document([row("a")])  # a valid grade of 1.0, read from nothing
    (logs / "grade.json").write_bytes(forged.to_bytes())
    (logs / "reward.txt").write_text("1.0\n")
    (logs / "reward.json").write_text('{"reward": 1.0}')
    rows = write_rows(tmp_path / "rows.jsonl", [row("a", verdict="fail")])
    assert main(["fold", str(rows), "--logs", str(logs)]) == 0
    assert (logs / "reward.txt").read_text() == "0.0\n"
    assert json.loads((logs / "reward.json").read_text()) == {"reward": 0.0}
    (logs / "grade.json").write_text("not even JSON")
    (logs / "reward.txt").write_text("1.0\n")
    assert main(["fold", str(rows), "--logs", str(logs)]) == 0
    assert "it is not a grade document" in capsys.readouterr().err
    assert (logs / "reward.txt").read_text() == "0.0\n"


def test_grade_logs_environment_variable(row, tmp_path):
    rows = write_rows(tmp_path / "rows.jsonl", [row("a")])
    result = run_cli("fold", str(rows), env={"GRADE_LOGS": str(tmp_path / "env-logs"), "PATH": ""})
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "env-logs" / "grade.json").exists()


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            [
                '{"id": "a", "kind": "fail_to_pass", "verdict": "pass"}',
                '{"id": "b", "kind": "fail_to_pass", "verdict": "maybe"}',
            ],
            ":2: verdict:",
        ),
        (
            ['{"id": "a", "kind": "fail_to_pass", "verdict": "pass", "measures": {"x": NaN}}'],
            ":1: NaN is not a JSON number",
        ),
        (['{"id": "a", "kind": "fail_to_pass", "verdict": "pass"'], ":1: invalid JSON at line 1"),
        (["[1, 2]"], ":1: a row is a JSON object"),
        (
            ['{"id": "a", "kind": "fail_to_pass", "verdict": "ungradable", "code": "BOGUS_CODE"}'],
            ":1: code: unknown refusal code 'BOGUS_CODE'",
        ),
        (
            ['{"id": "a", "kind": "fail_to_pass", "verdict": "pass", "colour": "red"}'],
            ":1: colour: Extra inputs are not permitted",
        ),
        (
            ['{"id": "a", "kind": "fail_to_pass", "verdict": "pass", "measures": {"x": true}}'],
            ":1: measures.x:",
        ),
    ],
)
def test_bad_rows_exit_2_naming_file_line_and_field(tmp_path, lines, expected):
    rows = tmp_path / "rows.jsonl"
    rows.write_text("\n".join(lines) + "\n")
    result = run_cli("fold", str(rows), "--logs", str(tmp_path / "l"))
    assert result.returncode == 2
    assert f"{rows}{expected}" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "l").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["fold", "/nonexistent/rows.jsonl"],
        ["fold", "ROWS", "--scheme", "nope/1"],
        ["fold", "ROWS", "--case-set", "/nonexistent/task.json"],
        ["fold", "ROWS", "--replaces", "xyz"],
        ["verify", "/nonexistent/dir"],
        ["verify", "GARBAGE"],
    ],
)
def test_bad_arguments_exit_2_without_traceback(row, tmp_path, args):
    rows = write_rows(tmp_path / "rows.jsonl", [row("a")])
    garbage = tmp_path / "grade.json"
    garbage.write_text("{not json")
    args = [
        str(rows) if arg == "ROWS" else str(garbage) if arg == "GARBAGE" else arg for arg in args
    ]
    if args[0] == "fold":
        args += ["--logs", str(tmp_path / "l")]
    result = run_cli(*args)
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr and result.stderr.strip()


def test_verify_reports_inconsistency_with_exit_1(row, tmp_path, capsys):
    rows = write_rows(tmp_path / "rows.jsonl", [row("a", verdict="fail")])
    logs = tmp_path / "l"
    assert main(["fold", str(rows), "--logs", str(logs)]) == 0
    (logs / "reward.txt").write_text("1.0\n")
    assert main(["verify", str(logs)]) == 1
    assert "reward.txt: stored 1.0, expected 0.0" in capsys.readouterr().out
    data = json.loads((logs / "grade.json").read_text())
    data["reward"] = 1.0
    (logs / "grade.json").write_text(json.dumps(data))
    assert main(["verify", str(logs / "grade.json"), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["consistent"] is False
    assert [item["where"] for item in report["disagreements"]] == ["reward", "grade.json"]


def test_verify_flags_reward_files_with_no_grade_in_a_run_and_in_a_sweep(row, tmp_path, capsys):
    # A run whose target holds a reward and no grade.json (planted, or left
    # when a publish died after clearing part of it): verify of that one
    # run says so and exits 1, as the same run is flagged in a sweep.
    sweep = tmp_path / "sweep"
    own, in_place = sweep / "run-1", sweep / "run-2" / "logs" / "verifier"
    for place in (own, in_place):
        place.mkdir(parents=True)
        (place / "reward.txt").write_text("1.0\n")
    (own / "reward.json").write_text('{"reward": 1.0}')
    assert main(["verify", str(own)]) == 1
    out = capsys.readouterr().out
    assert f"{own}: reward.txt, reward.json with no grade.json beside them" in out
    assert f"{own}: reward.txt: stored 'present', expected 'absent (no grade.json" in out
    assert f"{own}: reward.json: stored 'present'" in out
    assert main(["verify", "--json", str(in_place)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["consistent"] is False and report["gradable"] is None
    assert [item["where"] for item in report["disagreements"]] == ["reward.txt"]
    # No grade stands to repair from: --repair says so and keeps the files.
    assert main(["verify", "--repair", str(own)]) == 1
    assert "repaired" not in capsys.readouterr().out
    assert (own / "reward.txt").exists()
    # A sweep: each run flagged in the same words, counted inconsistent.
    (sweep / "run-3").mkdir()  # graded nowhere: unreadable, as before
    assert main(["verify", str(sweep)]) == 1
    out = capsys.readouterr().out
    assert f"{own}: reward.txt, reward.json with no grade.json beside them" in out
    assert f"{in_place}: reward.txt with no grade.json beside it" in out
    assert out.strip().endswith("3 runs, 0 consistent, 0 repaired, 2 inconsistent, 1 unreadable")
    # Publishing the run's grade removes them first; verify agrees then.
    rows = write_rows(tmp_path / "rows.jsonl", [row("a", verdict="fail")])
    assert main(["fold", str(rows), "--logs", str(own)]) == 0
    assert (own / "reward.txt").read_text() == "0.0\n"
    assert main(["verify", str(own)]) == 0


def test_verify_names_a_grade_rewritten_in_other_bytes(row, tmp_path, capsys):
    rows = write_rows(tmp_path / "rows.jsonl", [row("a")])
    logs = tmp_path / "l"
    assert main(["fold", str(rows), "--logs", str(logs)]) == 0
    assert main(["verify", str(logs)]) == 0
    capsys.readouterr()
    same = json.loads((logs / "grade.json").read_text())
    (logs / "grade.json").write_text(json.dumps(same))  # same content, compact bytes
    assert main(["verify", str(logs)]) == 1
    out = capsys.readouterr().out
    assert "grade.json: stored 'bytes not in canonical form'" in out


def test_verify_says_which_file_beside_the_grade_it_cannot_read(row, tmp_path, capsys):
    rows = write_rows(tmp_path / "rows.jsonl", [row("a")])
    logs = tmp_path / "l"
    assert main(["fold", str(rows), "--logs", str(logs)]) == 0
    capsys.readouterr()
    (logs / "ctrf.json").unlink()
    (logs / "ctrf.json").mkdir()  # a directory where the CTRF view should be
    assert main(["verify", str(logs)]) == 1  # the grade reads; the set beside it is broken
    captured = capsys.readouterr()
    assert "ctrf.json: stored 'a directory, not a regular file'" in captured.out
    assert "internal error" not in captured.err


def test_schema_prints_the_shipped_schemas(capsys):
    assert main(["schema", "grade"]) == 0
    assert json.loads(capsys.readouterr().out) == load("grade")
    assert main(["schema", "row"]) == 0
    assert json.loads(capsys.readouterr().out)["title"] == "truereward case result row"


def test_codes_lists_blame_and_retry(capsys):
    assert main(["codes", "--json"]) == 0
    listed = {item["code"]: item for item in json.loads(capsys.readouterr().out)}
    assert listed["EVIDENCE_MISSING"]["blame"] == "run"
    assert listed["GRADER_TIMEOUT"]["retry"] is True
    assert main(["codes"]) == 0
    assert "RUN_NOT_DETERMINISTIC  run" in capsys.readouterr().out


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "truereward"
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout.startswith("truereward ")


@pytest.mark.parametrize("args", [["schema", "grade"], ["codes"], ["schema", "row"]])
def test_a_closed_output_pipe_ends_the_command_quietly_with_141(args):
    # What `truereward schema grade | head` meets when head is gone before the
    # last write; the read end is closed up front, so every write fails.
    script = Path(sys.executable).parent / "truereward"
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [str(script), *args], stdout=write_end, stderr=subprocess.PIPE, check=False
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, b"")


def test_schema_into_head_prints_the_start_and_no_error():
    script = Path(sys.executable).parent / "truereward"
    done = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f"'{script}' schema grade | head -n 3"],
        capture_output=True,
        text=True,
        check=False,
    )
    # 141 when head left before the last write, 0 when the pipe took it all.
    assert done.returncode in (0, 141) and done.stderr == ""
    assert done.stdout.splitlines() == json.dumps(load("grade"), indent=2).splitlines()[:3]


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (number(int, least=0), "1.5", "a whole number >= 0, got '1.5'"),
        (number(int, least=1), "0", "a whole number >= 1, got '0'"),
        (number(float, least=0.0, most=1.0), "1.01", "a finite number from 0 to 1, got '1.01'"),
        (number(float, least=0.0, most=1.0), "nan", "a finite number from 0 to 1, got 'nan'"),
        (number(float, positive=True), "0", "a finite number > 0, got '0'"),
        (number(float, positive=True), "inf", "a finite number > 0, got 'inf'"),
        (number(float, least=0.0), "-0.5", "a finite number >= 0, got '-0.5'"),
    ],
)
def test_the_one_number_parser_says_what_it_expects(parse, text, message):
    with pytest.raises(argparse.ArgumentTypeError) as caught:
        parse(text)
    assert str(caught.value) == message


def test_the_one_number_parser_keeps_what_is_in_range():
    assert number(int, least=1)("7") == 7
    assert number(float, least=0.0, most=1.0)("1") == 1.0
    assert number(float, positive=True)("1e-9") == 1e-9
