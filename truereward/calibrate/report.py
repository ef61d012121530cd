"""Scoring collected answers against labels: :func:`score` and its
:class:`Calibration`.

Only labelled (case, question) pairs count. Per question: ``total``,
``answered``, ``undecided``, ``correct``; ``accuracy`` (abstentions count
against the judge) and ``accuracy_when_answered``, ``None`` when undefined,
never 0; ``p_correct`` per case and ``mean_p_correct`` over the answers that
reported probabilities. A miss is a decided answer that differs from its
label (never an abstention); provider failures never reach a report.
docs/calibrate.md, "Scoring collected answers".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field, computed_field

from ..judging.answers import Answer, Decider, Decision, decide_prepared
from ..judging.errors import JudgeError
from ..judging.numbers import finite_float
from ..judging.questions import Question, check_questions
from ..util.dumped import Dumped
from .case import LabelledCase, check_cases
from .errors import CalibrationError

__all__ = [
    "Accuracy",
    "Calibration",
    "Miss",
    "QuestionStats",
    "check_latency",
    "check_timing",
    "score",
]


class Accuracy(Dumped):
    """A mixin for dataclasses that count labelled answers: ``correct`` of
    ``total``, :meth:`abstentions` of them without a decision. ``answered``
    is ``total`` less the abstentions; ``accuracy`` (``correct / total``)
    counts an abstention against the judge, ``accuracy_when_answered``
    (``correct / answered``) does not; each is ``None`` when its denominator
    is 0, never 0."""

    __slots__ = ()
    correct: int
    total: int

    def abstentions(self) -> int:
        """Labelled answers without a decision (the dataclass's own field)."""
        raise NotImplementedError

    @computed_field  # type: ignore[prop-decorator]
    @property
    def answered(self) -> int:
        """Labelled answers with a decision."""
        return self.total - self.abstentions()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def accuracy(self) -> float | None:
        """``correct / total``."""
        return self.correct / self.total if self.total else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def accuracy_when_answered(self) -> float | None:
        """``correct / answered``."""
        return self.correct / self.answered if self.answered else None


@dataclass(frozen=True, slots=True)
class QuestionStats(Accuracy):
    """Counts and label probabilities for the labelled cases of one question
    (see the module documentation for each figure and its zero case)."""

    correct: int
    undecided: int
    total: int
    p_correct: tuple[float | None, ...]

    def abstentions(self) -> int:
        return self.undecided

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mean_p_correct(self) -> float | None:
        """Mean reported probability of the label, abstentions included;
        ``None`` when no labelled answer reported probabilities."""
        reported = [value for value in self.p_correct if value is not None]
        return math.fsum(reported) / len(reported) if reported else None


@dataclass(frozen=True, slots=True)
class Miss(Dumped):
    """A decided answer that differs from its label."""

    case_index: int
    case_id: str | None
    question: str
    label: Decision
    decision: Decision
    confidence: float


@dataclass(frozen=True, slots=True)
class Calibration(Dumped):
    """A scored batch. ``questions`` maps each question name (in the order
    asked) to its :class:`QuestionStats`; ``misses`` lists the decided wrong
    answers (case order, then question order); ``decisions`` holds one
    ``{question name: decision or None}`` per case. ``latencies_ms`` has one
    measured latency per case and ``total_ms`` the wall time of the measured
    calls. The inputs are kept (``questions_asked``, ``cases``, ``answers``)
    so that :func:`~truereward.calibrate.at_min_confidence` can re-score
    without a provider; ``min_confidence`` is the threshold applied, if any.
    Its JSON leaves the inputs out (answers and states are in the log file).
    """

    questions: Mapping[str, QuestionStats]
    misses: tuple[Miss, ...]
    decisions: tuple[Mapping[str, Decision | None], ...]
    latencies_ms: tuple[float, ...]
    total_ms: float
    questions_asked: Annotated[tuple[Question, ...], Field(exclude=True)]
    cases: Annotated[tuple[LabelledCase, ...], Field(exclude=True)]
    answers: Annotated[tuple[Mapping[str, Answer], ...], Field(exclude=True)]
    min_confidence: float | None = None


def check_latency(value: object, where: str) -> float:
    """``value`` as a float if it is a finite number >= 0, else CalibrationError."""
    number = finite_float(value)
    if number is None or number < 0:
        raise CalibrationError(f"{where}: a finite number of milliseconds >= 0, got {value!r}")
    return number


def check_timing(
    latencies_ms: Sequence[float], total_ms: float, count: int, per: str
) -> tuple[tuple[float, ...], float]:
    """One latency for each of ``count`` items (``per`` names them in the
    message: "cases (one per case)", "outcomes"), each and the total
    checked by :func:`check_latency`; CalibrationError naming the field."""
    latencies = tuple(latencies_ms)
    if len(latencies) != count:
        raise CalibrationError(f"latencies_ms: {len(latencies)} entries for {count} {per}")
    checked = tuple(
        check_latency(value, f"latencies_ms[{index}]") for index, value in enumerate(latencies)
    )
    return checked, check_latency(total_ms, "total_ms")


def score(
    questions: Sequence[Question],
    cases: Sequence[LabelledCase],
    answers: Sequence[Mapping[str, Answer]],
    latencies_ms: Sequence[float],
    total_ms: float,
) -> Calibration:
    """Score already-collected answers; no provider is involved.

    ``answers`` holds one ``{question name: Answer}`` per case, with exactly
    the question names as keys; ``latencies_ms`` one latency per case.
    Mismatched lengths, unknown or missing keys, labels or answers that do
    not fit their question, and region questions raise CalibrationError
    naming the field. Label subsets and an empty case list are valid.
    """
    return _score(questions, cases, answers, latencies_ms, total_ms, min_confidence=None)


def _score(
    questions: Sequence[Question],
    cases: Sequence[LabelledCase],
    answers: Sequence[Mapping[str, Answer]],
    latencies_ms: Sequence[float],
    total_ms: float,
    *,
    min_confidence: float | None,
) -> Calibration:
    asked = check_questions(questions)
    deciders = [Decider(question) for question in asked]
    checked_cases = check_cases(asked, cases, deciders)
    answer_list = tuple(answers)
    if len(answer_list) != len(checked_cases):
        raise CalibrationError(
            f"answers: {len(answer_list)} entries for {len(checked_cases)} cases (one per case)"
        )
    latencies, total = check_timing(
        latencies_ms, total_ms, len(checked_cases), "cases (one per case)"
    )
    names = [question.name for question in asked]
    name_set = set(names)
    decisions: list[dict[str, Decision | None]] = []
    for index, case_answers in enumerate(answer_list):
        try:
            decisions.append(decide_prepared(deciders, name_set, case_answers))
        except JudgeError as error:
            raise CalibrationError(f"answers[{index}].{error}") from None
    correct = dict.fromkeys(names, 0)
    undecided = dict.fromkeys(names, 0)
    p_correct: dict[str, list[float | None]] = {name: [] for name in names}
    outcome_of = {decider.question.name: decider.outcome for decider in deciders}
    misses: list[Miss] = []
    for index, case in enumerate(checked_cases):
        labels = case.labels
        if not labels:
            continue
        case_answers = answer_list[index]
        case_decisions = decisions[index]
        # Question order, so that misses come in question order.
        for name in names if len(labels) > 1 else labels:
            if name not in labels:
                continue
            label = labels[name]
            answer = case_answers[name]
            probabilities = answer.probabilities
            # The label's probability: None when none was reported (Answer.probability_of).
            p_correct[name].append(
                probabilities.get(outcome_of[name](label), 0.0) if probabilities else None
            )
            decision = case_decisions[name]
            if decision is None:
                undecided[name] += 1
            elif type(decision) is type(label) and decision == label:  # same_decision
                correct[name] += 1
            else:
                misses.append(Miss(index, case.id, name, label, decision, answer.confidence))
    stats = {
        name: QuestionStats(
            correct=correct[name],
            undecided=undecided[name],
            total=len(p_correct[name]),
            p_correct=tuple(p_correct[name]),
        )
        for name in names
    }
    return Calibration(
        questions=stats,
        misses=tuple(misses),
        decisions=tuple(decisions),
        latencies_ms=latencies,
        total_ms=total,
        questions_asked=asked,
        cases=checked_cases,
        answers=tuple(dict(case_answers) for case_answers in answer_list),
        min_confidence=min_confidence,
    )
