"""The calibration log: a run's questions, cases, answers and latencies, as
JSON Lines, written by :func:`dump_log` and read by :func:`parse_log` (and
by ``truereward calibrate``).

A header line (``"format": "truereward-calibration/1"`` and the questions),
then one case a line; strict JSON, unknown fields are errors, and a bad
file raises :class:`LogFormatError` naming the file, line and field.
docs/calibrate.md, "The calibration log", gives every field.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from ..judging.answers import Answer, check_label, decide_all
from ..judging.errors import JudgeError
from ..judging.questions import Question, check_fields, check_questions
from ..util.strictjson import StrictJSONError, canonical_bytes, loads
from .case import LabelledCase
from .errors import CalibrationError
from .report import Calibration, check_latency, score

__all__ = ["FORMAT", "LogFormatError", "dump_log", "parse_log", "read_log", "write_log"]

#: The format name and version in the header.
FORMAT = "truereward-calibration/1"

R = TypeVar("R")

_HEADER_FIELDS = {"format", "questions", "total_ms"}
_CASE_FIELDS = {"id", "state", "labels", "answers", "latency_ms"}


class LogFormatError(CalibrationError):
    """A calibration log that cannot be read: ``source:line: field: why``."""

    def __init__(self, source: str, line: int, message: str) -> None:
        super().__init__(f"{source}:{line}: {message}")
        self.source = source
        self.line = line


def _read_line(text: str, source: str, number: int, parse: Callable[[dict[str, Any]], R]) -> R:
    """``parse`` of the JSON object on line ``number``; any problem with the
    line is a LogFormatError naming ``source`` and the line."""
    try:
        value = loads(text)
        if not isinstance(value, dict):
            raise CalibrationError(f"a line is a JSON object, got {type(value).__name__}")
        return parse(value)
    except (StrictJSONError, JudgeError) as error:
        raise LogFormatError(source, number, str(error)) from None


def _header(value: dict[str, Any]) -> tuple[tuple[Question, ...], float]:
    check_fields(value, _HEADER_FIELDS, "header")
    if value.get("format") != FORMAT:
        raise CalibrationError(
            f"format: the first line is a header with format {FORMAT!r}, "
            f"got {value.get('format')!r}"
        )
    raw = value.get("questions")
    if not isinstance(raw, list):
        raise CalibrationError(f"questions: a list of questions, got {raw!r:.80}")
    questions = []
    for index, item in enumerate(raw):
        try:
            questions.append(Question.from_json(item))
        except JudgeError as error:
            raise CalibrationError(f"questions[{index}].{error}") from None
    return check_questions(questions), check_latency(value.get("total_ms", 0.0), "total_ms")


def _case(
    value: dict[str, Any], asked: tuple[Question, ...]
) -> tuple[LabelledCase, dict[str, Answer], float]:
    check_fields(value, _CASE_FIELDS, "case")
    by_name = {question.name: question for question in asked}
    labels = value.get("labels", {})
    if not isinstance(labels, dict):
        raise CalibrationError(f"labels: an object of question name to label, got {labels!r:.80}")
    for name, label in labels.items():
        if name not in by_name:
            raise CalibrationError(f"labels.{name}: no question is named {name!r}")
        try:
            check_label(by_name[name], label)
        except JudgeError as error:
            raise CalibrationError(f"labels.{name}: {error}") from None
    raw_answers = value.get("answers")
    if not isinstance(raw_answers, dict):
        raise CalibrationError(
            f"answers: an object with one answer per question, got {raw_answers!r:.80}"
        )
    answers: dict[str, Answer] = {}
    for name, raw in raw_answers.items():
        try:
            answers[name] = Answer.from_json(raw)
        except JudgeError as error:
            raise CalibrationError(f"answers.{name}.{error}") from None
    try:
        decide_all(asked, answers)
    except JudgeError as error:
        raise CalibrationError(f"answers.{error}") from None
    case_id = value.get("id")
    try:
        case = LabelledCase(state=value.get("state"), labels=labels, id=case_id)
    except JudgeError as error:
        raise CalibrationError(f"id: {error}") from None
    latency = check_latency(value.get("latency_ms", 0.0), "latency_ms")
    return case, answers, latency


def parse_log(text: str | bytes, source: str = "<log>") -> Calibration:
    """The report a calibration log holds (scored with :func:`score`).
    LogFormatError naming ``source``, the line and the field otherwise."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise LogFormatError(source, 1, f"not UTF-8 text (byte {error.start})") from None
    # Lines end at "\n" only: str.splitlines() would also split inside a JSON
    # string holding U+2028 or U+0085, which canonical output leaves raw.
    lines = [
        (number, line.removesuffix("\r"))
        for number, line in enumerate(text.split("\n"), 1)
        if line.strip()
    ]
    if not lines:
        raise LogFormatError(source, 1, f"empty: the first line is a header with format {FORMAT!r}")
    header_number, header_line = lines[0]
    if header_number != 1:
        raise LogFormatError(source, 1, "the header is the first line (no blank line before it)")
    asked, total_ms = _read_line(header_line, source, 1, _header)
    cases: list[LabelledCase] = []
    answers: list[dict[str, Answer]] = []
    latencies: list[float] = []
    ids: dict[str, int] = {}
    for number, line in lines[1:]:
        case, case_answers, latency = _read_line(
            line, source, number, functools.partial(_case, asked=asked)
        )
        if case.id is not None:
            if case.id in ids:
                raise LogFormatError(
                    source, number, f"id: {case.id!r} is already used on line {ids[case.id]}"
                )
            ids[case.id] = number
        cases.append(case)
        answers.append(case_answers)
        latencies.append(latency)
    return score(asked, cases, answers, latencies, total_ms)


def read_log(path: str | Path) -> Calibration:
    """:func:`parse_log` of a file, read as every input is
    (:func:`truereward.util.safefile.read_regular`: ``OSError`` when it cannot
    be read, or is not a regular file, or is larger than its limit)."""
    from ..util import safefile

    return parse_log(safefile.read_regular(str(path)), str(path))


def _lines(report: Calibration, include_state: bool) -> Iterable[Mapping[str, Any]]:
    yield {
        "format": FORMAT,
        "questions": [question.to_json() for question in report.questions_asked],
        "total_ms": report.total_ms,
    }
    for case, case_answers, latency in zip(
        report.cases, report.answers, report.latencies_ms, strict=True
    ):
        line: dict[str, Any] = {}
        if case.id is not None:
            line["id"] = case.id
        if include_state and case.state is not None:
            line["state"] = case.state
        if case.labels:
            line["labels"] = dict(case.labels)
        line["answers"] = {name: answer.to_json() for name, answer in case_answers.items()}
        line["latency_ms"] = latency
        yield line


def dump_log(report: Calibration, *, include_state: bool = True) -> str:
    """The report as a calibration log (one JSON object a line, canonical
    key order). States must be JSON values (TypeError otherwise); leave them
    out with ``include_state=False``. Answers are written as given, so a
    report re-scored with :func:`at_min_confidence` is written with its
    lowered answers."""
    return "".join(
        canonical_bytes(line, indent=None).decode("utf-8") for line in _lines(report, include_state)
    )


def write_log(report: Calibration, path: str | Path, *, include_state: bool = True) -> None:
    """Write :func:`dump_log` to ``path``."""
    Path(path).write_text(dump_log(report, include_state=include_state), encoding="utf-8")
