"""The calibration log and ``truereward calibrate``: round trips, output,
and bad input that exits 2 naming the file, line and field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.calibrate_support import QUESTIONS, labelled_batches
from tests.support.markdown import HOSTILE, as_read, table_rows
from truereward.calibrate import (
    Answer,
    LabelledCase,
    LogFormatError,
    at_min_confidence,
    dump_log,
    parse_log,
    read_log,
    score,
    write_log,
)
from truereward.cli import main

HEADER = {
    "format": "truereward-calibration/1",
    "questions": [{"name": "relevant", "kind": "boolean"}],
    "total_ms": 40.0,
}


def case_line(value, label=True, confidence=0.9, **extra):
    line = {"answers": {"relevant": {"value": value, "confidence": confidence}}, "latency_ms": 10}
    if label is not None:
        line["labels"] = {"relevant": label}
    line.update(extra)
    return line


def write_lines(path: Path, lines: list) -> Path:
    path.write_text(
        "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    )
    return path


def worked_log(tmp_path: Path, name: str = "log.jsonl", values=(True, False, None, True)) -> Path:
    lines = [HEADER] + [
        case_line(value, id=f"c{index}", confidence=0.5 + index / 10)
        for index, value in enumerate(values)
    ]
    return write_lines(tmp_path / name, lines)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "truereward", *args], capture_output=True, text=True, check=False
    )


@pytest.mark.slow
@given(labelled_batches(max_cases=6))
def test_a_log_round_trips(batch):
    cases, answers = batch
    report = score(QUESTIONS, cases, answers, [float(i) for i in range(len(cases))], 99.0)
    again = parse_log(dump_log(report))
    assert again.decisions == report.decisions
    assert again.questions == report.questions
    assert again.cases == report.cases and again.answers == report.answers
    assert again.latencies_ms == report.latencies_ms and again.total_ms == 99.0


def test_write_and_read_a_log_with_unusual_text(tmp_path):
    report = score(
        QUESTIONS[:1],
        [
            LabelledCase(
                state="line\u2028separator\u0085and\nnewline", labels={"relevant": True}, id="é"
            )
        ],
        [{"relevant": Answer(True, 0.75)}],
        [1.5],
        2.0,
    )
    write_log(report, tmp_path / "log.jsonl")
    assert read_log(tmp_path / "log.jsonl").cases == report.cases


def test_score_prints_the_worked_numbers_as_json(tmp_path, capsys):
    log = worked_log(tmp_path)
    assert main(["calibrate", "score", str(log), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    stats = out["questions"]["relevant"]
    assert (stats["correct"], stats["undecided"], stats["total"], stats["answered"]) == (2, 1, 4, 3)
    assert stats["accuracy"] == 0.5 and stats["accuracy_when_answered"] == pytest.approx(2 / 3)
    assert stats["mean_p_correct"] is None  # no probabilities were reported
    assert [miss["case_id"] for miss in out["misses"]] == ["c1"]
    assert out["total_ms"] == 40.0 and out["latency"]["p50_ms"] == 10.0


def test_score_prints_markdown_by_default(tmp_path, capsys):
    assert main(["calibrate", "score", str(worked_log(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "| relevant | 4 | 3 | 1 | 2 | 0.500 | 0.667 | n/a |" in out
    assert "| c1 | relevant | true | false | 0.600 |" in out


def test_markdown_shows_case_ids_as_they_are(tmp_path, capsys):
    names = HOSTILE[:3]  # a case id holds no line break
    lines = [HEADER] + [case_line(False, id=name) for name in names]
    assert main(["calibrate", "score", str(write_lines(tmp_path / "log.jsonl", lines))]) == 0
    misses = table_rows(capsys.readouterr().out.split("## Misses")[1])
    assert [row[:4] for row in misses] == [
        [as_read(name), "relevant", "true", "false"] for name in names
    ]


def test_threshold_reports_low_confidence_answers_as_abstentions(tmp_path, capsys):
    # Confidences are 0.5, 0.6, 0.7, 0.8: at 0.65 the first two become abstentions.
    log = worked_log(tmp_path)
    assert main(["calibrate", "threshold", str(log), "--min-confidence", "0.65", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    stats = out["questions"]["relevant"]
    assert (stats["correct"], stats["undecided"], stats["total"]) == (1, 3, 4)
    assert out["min_confidence"] == 0.65 and out["misses"] == []
    assert main(["calibrate", "threshold", str(log), "--min-confidence", "0.65"]) == 0
    assert "confidence below 0.65 are counted as abstentions" in capsys.readouterr().out


def test_stability_across_logs(tmp_path, capsys):
    first = worked_log(tmp_path, "one.jsonl", values=(True, False, None))
    second = worked_log(tmp_path, "two.jsonl", values=(True, True, None))
    assert main(["calibrate", "stability", str(first), str(second), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stability"] == {"relevant": pytest.approx(2 / 3)} and out["cases"] == 3
    assert main(["calibrate", "stability", str(first), str(second)]) == 0
    assert "| relevant | 0.667 |" in capsys.readouterr().out


def test_misaligned_logs_name_the_file(tmp_path):
    first = worked_log(tmp_path, "one.jsonl", values=(True, False))
    second = worked_log(tmp_path, "two.jsonl", values=(True,))
    result = run_cli("calibrate", "stability", str(first), str(second))
    assert result.returncode == 2
    assert f"{second}: 1 cases, {first} has 2" in result.stderr


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([], ":1: empty"),
        ([{"format": "other/1", "questions": []}], ":1: format:"),
        ([{**HEADER, "extra": 1}], ":1: extra: unknown header field"),
        (
            [{**HEADER, "questions": [{"name": "q", "kind": "verdict"}]}],
            r":1: questions[0].q: kind",
        ),
        ([{**HEADER, "questions": [{"name": "r", "kind": "region"}]}], ":1: r: region questions"),
        ([{**HEADER, "total_ms": -1}], ":1: total_ms:"),
        ([HEADER, case_line(True), "{not json"], ":3: invalid JSON at line 1"),
        ([HEADER, case_line(True), '{"answers": NaN}'], ":3: NaN is not a JSON number"),
        ([HEADER, "[1, 2]"], ":2: a line is a JSON object"),
        ([HEADER, case_line("yes")], ":2: answers.relevant.value: true or false"),
        ([HEADER, case_line(True, confidence=2)], ":2: answers.relevant.confidence:"),
        ([HEADER, case_line(True, label="yes")], ":2: labels.relevant: a boolean question's label"),
        ([HEADER, case_line(True, labels={"nope": True})], ":2: labels.nope: no question"),
        ([HEADER, {"answers": {}}], ":2: answers.relevant: no answer"),
        ([HEADER, case_line(True, colour="red")], ":2: colour: unknown case field"),
        ([HEADER, case_line(True, latency_ms="fast")], ":2: latency_ms:"),
        ([HEADER, case_line(True, latency_ms=10**400)], ":2: latency_ms:"),
        ([HEADER, case_line(True, confidence=10**400)], ":2: answers.relevant.confidence:"),
        ([HEADER, case_line(True, id="a"), case_line(True, id="a")], ":3: id: 'a' is already used"),
        ([HEADER, case_line(True, id=" a")], ":2: id:"),
        (["", HEADER], ":1: the header is the first line"),
    ],
)
def test_bad_logs_exit_2_naming_file_line_and_field(tmp_path, lines, expected):
    log = write_lines(tmp_path / "log.jsonl", lines)
    result = run_cli("calibrate", "score", str(log))
    assert result.returncode == 2, result
    assert f"{log}{expected}" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["calibrate", "score", "/nonexistent/log.jsonl"],
        ["calibrate", "threshold", "LOG", "--min-confidence", "1.5"],
        ["calibrate", "threshold", "LOG", "--min-confidence", "nan"],
        ["calibrate", "threshold", "LOG"],
        ["calibrate", "stability"],
        ["calibrate"],
    ],
)
def test_bad_arguments_exit_2_without_traceback(tmp_path, args):
    log = worked_log(tmp_path)
    result = run_cli(*[str(log) if arg == "LOG" else arg for arg in args])
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr and result.stderr.strip()


def test_non_utf8_log_is_bad_input(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"\xff\xfe{}")
    result = run_cli("calibrate", "score", str(log))
    assert result.returncode == 2 and f"{log}:1: not UTF-8" in result.stderr


def test_a_rescored_report_writes_its_lowered_answers(tmp_path):
    report = parse_log(worked_log(tmp_path).read_text())
    lowered = at_min_confidence(report, 0.65)
    assert parse_log(dump_log(lowered)).decisions == lowered.decisions


def parse_error(text: str) -> str | None:
    """The LogFormatError message for ``text``, or None when it parses; any
    other exception fails the test."""
    try:
        parse_log(text, "g.jsonl")
    except LogFormatError as error:
        return str(error)
    return None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "answers",
                    "labels",
                    "id",
                    "value",
                    "relevant",
                    "confidence",
                    "latency_ms",
                    "state",
                ]
            ),
            children,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@given(st.lists(json_values, max_size=4))
def test_garbage_case_lines_never_crash(lines):
    text = json.dumps(HEADER) + "\n" + "".join(json.dumps(line) + "\n" for line in lines)
    message = parse_error(text)
    assert message is None or message.startswith("g.jsonl:")


@given(st.text(max_size=200))
def test_garbage_text_never_crashes(text):
    message = parse_error(text)
    assert message is None or message.startswith("g.jsonl:")
