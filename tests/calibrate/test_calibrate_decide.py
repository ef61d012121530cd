"""Questions, answers, labels and decide(): the rounding table, abstentions,
the unsupported region kind, and validation that names the field."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truereward.calibrate import (
    Answer,
    JudgeError,
    LabelledCase,
    Question,
    QuestionKind,
    UnsupportedQuestion,
    check_cases,
    check_questions,
    decide,
    decide_all,
    same_decision,
)

RUBRIC = Question.score("quality", ["none", "poor", "fair", "good", "great"])


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.0, 0),
        (0.49999999999999994, 1),  # 0.49999999999999994 + 0.5 == 1.0 in binary floating point
        (0.5, 1),
        (1.4999999, 1),
        (1.5, 2),
        (2.5, 3),
        (3.5, 4),
        (4, 4),
        (2, 2),
    ],
)
def test_score_rounds_half_up_with_floor_x_plus_half(value, expected):
    decision = decide(RUBRIC, Answer(value, 0.9))
    assert decision == expected and type(decision) is int


def test_python_round_would_differ_on_the_table():
    # The table is not Python's banker's rounding: these are the cases where it matters.
    assert [round(x) for x in (0.49999999999999994, 2.5)] == [0, 2]
    assert [decide(RUBRIC, Answer(x, 1.0)) for x in (0.49999999999999994, 2.5)] == [1, 3]


@given(st.floats(min_value=0, max_value=4, allow_nan=False))
def test_score_decision_is_the_nearest_level_rounding_half_up(value):
    decision = decide(RUBRIC, Answer(value, 0.5))
    assert decision == math.floor(value + 0.5)
    assert 0 <= decision <= 4
    assert abs(decision - value) <= 0.5


def test_boolean_and_choice_decisions_are_the_value():
    tone = Question.choice("tone", ["calm", "rude"])
    assert decide(Question.boolean("ok"), Answer(True, 0.8)) is True
    assert decide(Question.boolean("ok"), Answer(False, 0.8)) is False
    assert decide(tone, Answer("rude", 0.6)) == "rude"


@pytest.mark.parametrize(
    "question", [Question.boolean("ok"), Question.choice("c", ["a", "b"]), RUBRIC]
)
def test_an_undecided_answer_is_an_abstention(question):
    assert decide(question, Answer(None, 0.99)) is None


@pytest.mark.parametrize("value", [None, True, 1.0, (0, 0, 10, 10)])
def test_region_is_unsupported_even_when_undecided(value):
    region = Question.region("where")
    assert region.kind is QuestionKind.REGION
    with pytest.raises(UnsupportedQuestion):
        decide(region, Answer(value, 0.5))


def test_region_is_rejected_as_a_question_to_score_and_as_a_label():
    region = Question.region("where")
    with pytest.raises(UnsupportedQuestion):
        check_questions([region])
    with pytest.raises(UnsupportedQuestion, match=r"cases\[0\]\.labels\.where"):
        check_cases((region,), [LabelledCase(labels={"where": True})])


@pytest.mark.parametrize(
    ("question", "value", "message"),
    [
        (Question.boolean("ok"), "yes", "value: true or false"),
        (Question.boolean("ok"), 1, "value: true or false"),
        (Question.choice("c", ["a", "b"]), "z", "value: one of"),
        (RUBRIC, 4.0001, "value: an expected score from 0 to 4"),
        (RUBRIC, -0.1, "value: an expected score from 0 to 4"),
        (RUBRIC, True, "value: an expected score"),
        (RUBRIC, "2", "value: an expected score"),
    ],
)
def test_an_answer_that_does_not_fit_its_question_is_an_error(question, value, message):
    with pytest.raises(JudgeError, match=message):
        decide(question, Answer(value, 0.5))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"value": True, "confidence": 1.5}, "confidence: a finite number from 0 to 1"),
        ({"value": True, "confidence": math.nan}, "confidence"),
        ({"value": True, "confidence": True}, "confidence"),
        ({"value": math.inf, "confidence": 0.5}, "value: a finite number"),
        ({"value": [1, 2], "confidence": 0.5}, "value: None, a boolean"),
        (
            {"value": True, "confidence": 0.5, "probabilities": {"true": 0.8, "false": 0.8}},
            "add up to at most 1",
        ),
        ({"value": True, "confidence": 0.5, "probabilities": {"true": -0.1}}, "probabilities.true"),
        ({"value": True, "confidence": 0.5, "probabilities": {1: 0.5}}, "keys are strings"),
    ],
)
def test_answer_validation_names_the_field(kwargs, message):
    with pytest.raises(JudgeError, match=message):
        Answer(**kwargs)


@pytest.mark.parametrize(
    "build",
    [
        lambda: Answer(10**400, 0.5),
        lambda: Answer(True, 10**400),
        lambda: Answer((0, 0, 10**400, 1), 0.5),
        lambda: Answer(True, 0.5, probabilities={"true": 10**400}),
    ],
)
def test_integers_too_large_for_a_float_are_refused_not_crashed_on(build):
    with pytest.raises(JudgeError):
        build()


def test_probabilities_must_name_outcomes_of_the_question():
    with pytest.raises(JudgeError, match=r"probabilities\.maybe"):
        decide(Question.boolean("ok"), Answer(True, 0.5, probabilities={"maybe": 0.5}))
    assert RUBRIC.outcomes == ("0", "1", "2", "3", "4")
    assert decide(RUBRIC, Answer(2.2, 0.5, probabilities={"2": 0.7, "3": 0.3})) == 2


def test_answer_probability_of_distinguishes_unreported_from_zero():
    assert Answer(True, 0.5).probability_of("true") is None
    assert Answer(True, 0.5, probabilities={"true": 0.5}).probability_of("false") == 0.0


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Question.boolean(""), "non-empty"),
        (lambda: Question.boolean(" padded"), "whitespace"),
        (lambda: Question.choice("c", ["only"]), "at least 2 options"),
        (lambda: Question.choice("c", ["a", "a"]), "distinct"),
        (lambda: Question.choice("c", "ab"), "list of strings"),
        (lambda: Question.score("s", 1), "at least 2 levels"),
        (lambda: Question.score("s", ["a", ""]), "non-empty"),
        (lambda: Question("x", "verdict"), "kind is one of"),  # type: ignore[arg-type]
        (lambda: Question("x", QuestionKind.BOOLEAN, options=("a", "b")), "only a choice"),
    ],
)
def test_question_validation(build, message):
    with pytest.raises(JudgeError, match=message):
        build()


def test_question_names_are_unique_in_a_set():
    with pytest.raises(JudgeError, match=r"questions\[1\]: the name 'ok' is used twice"):
        check_questions([Question.boolean("ok"), Question.choice("ok", ["a", "b"])])


def test_score_with_a_level_count_and_json_round_trip():
    question = Question.score("s", 3, text="How good?")
    assert question.levels == ("0", "1", "2") and question.prompt == "How good?"
    for item in (question, Question.boolean("b"), Question.choice("c", ["x", "y"])):
        assert Question.from_json(item.to_json()) == item


@pytest.mark.parametrize(
    ("label", "question", "message"),
    [
        (1, Question.boolean("ok"), "true or false"),
        ("c", Question.choice("ok", ["a", "b"]), "one of"),
        (5, RUBRIC, "rubric index from 0 to 4"),
        (True, RUBRIC, "rubric index"),
        (2.0, RUBRIC, "rubric index"),
    ],
)
def test_labels_are_checked_against_their_question(label, question, message):
    with pytest.raises(JudgeError, match=rf"cases\[1\]\.labels\.{question.name}: .*{message}"):
        check_cases(
            (question,), [LabelledCase(labels={}), LabelledCase(labels={question.name: label})]
        )


def test_a_label_for_an_unknown_question_is_an_error():
    with pytest.raises(JudgeError, match=r"cases\[0\]\.labels\.nope: no question"):
        check_cases((Question.boolean("ok"),), [LabelledCase(labels={"nope": True})])


def test_decide_all_needs_exactly_the_question_names():
    questions = (Question.boolean("a"), Question.boolean("b"))
    assert decide_all(questions, {"a": Answer(True, 1), "b": Answer(None, 0)}) == {
        "a": True,
        "b": None,
    }
    with pytest.raises(JudgeError, match="b: no answer"):
        decide_all(questions, {"a": Answer(True, 1)})
    with pytest.raises(JudgeError, match="c: an answer for a question that was not asked"):
        decide_all(questions, {"a": Answer(True, 1), "b": Answer(True, 1), "c": Answer(True, 1)})


def test_same_decision_does_not_confuse_true_with_one():
    assert same_decision(None, None)
    assert same_decision(2, 2)
    assert not same_decision(True, 1)
    assert not same_decision(None, False)
