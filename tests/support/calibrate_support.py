"""Builders and strategies shared by the calibration tests."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from truereward.calibrate import Answer, LabelledCase, Question

BOOLEAN = Question.boolean("relevant")
CHOICE = Question.choice("tone", ["calm", "neutral", "rude"])
SCORE = Question.score("quality", ["poor", "fair", "good"])
QUESTIONS = (BOOLEAN, CHOICE, SCORE)


def boolean_answers(values: list[bool | None], confidence: float = 0.9) -> list[dict[str, Answer]]:
    """One ``{"relevant": Answer}`` per value."""
    return [{"relevant": Answer(value, confidence)} for value in values]


confidences = st.floats(min_value=0, max_value=1, allow_nan=False)


@st.composite
def answers_for(draw: Any, question: Question) -> Answer:
    """A valid answer to ``question``, possibly undecided, with or without
    probabilities."""
    if draw(st.integers(0, 4)) == 0:
        value: Any = None
    elif question is BOOLEAN:
        value = draw(st.booleans())
    elif question is CHOICE:
        value = draw(st.sampled_from(CHOICE.options))
    else:
        value = draw(st.floats(min_value=0, max_value=2, allow_nan=False))
    probabilities: dict[str, float] = {}
    if draw(st.booleans()):
        weights = [draw(st.integers(0, 10)) for _ in question.outcomes]
        total = sum(weights) or 1
        probabilities = {
            outcome: weight / total
            for outcome, weight in zip(question.outcomes, weights, strict=True)
        }
    return Answer(value, draw(confidences), probabilities=probabilities)


def labels_for(question: Question) -> Any:
    if question is BOOLEAN:
        return st.booleans()
    if question is CHOICE:
        return st.sampled_from(CHOICE.options)
    return st.integers(0, 2)


@st.composite
def labelled_batches(
    draw: Any, max_cases: int = 12
) -> tuple[list[LabelledCase], list[dict[str, Answer]]]:
    """Cases with random label subsets and one valid answer set per case."""
    count = draw(st.integers(0, max_cases))
    cases = []
    answers = []
    for index in range(count):
        labels = {
            question.name: draw(labels_for(question))
            for question in QUESTIONS
            if draw(st.booleans())
        }
        cases.append(LabelledCase(state=f"case {index}", labels=labels, id=f"c{index}"))
        answers.append({question.name: draw(answers_for(question)) for question in QUESTIONS})
    return cases, answers
