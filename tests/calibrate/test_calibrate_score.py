"""score(), at_min_confidence() and stability(): the worked numbers, the zero
cases, mismatched inputs, and invariants."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.calibrate_support import (
    BOOLEAN,
    CHOICE,
    QUESTIONS,
    SCORE,
    boolean_answers,
    confidences,
    labelled_batches,
)
from truereward.calibrate import (
    Answer,
    Calibration,
    FlowReport,
    JudgeError,
    LabelledCase,
    Question,
    QuestionStats,
    UnsupportedQuestion,
    at_min_confidence,
    score,
    stability,
)


def boolean_report(
    decisions: list[bool | None], labels: list[bool | None] | None = None
) -> Calibration:
    labels = labels if labels is not None else [True] * len(decisions)
    cases = [
        LabelledCase(state=index, labels={} if label is None else {"relevant": label})
        for index, label in enumerate(labels)
    ]
    return score([BOOLEAN], cases, boolean_answers(decisions), [1.0] * len(cases), 10.0)


def test_worked_example_true_false_none_true_against_true():
    report = boolean_report([True, False, None, True])
    stats = report.questions["relevant"]
    assert (stats.correct, stats.undecided, stats.total, stats.answered) == (2, 1, 4, 3)
    assert stats.accuracy == 0.5
    assert stats.accuracy_when_answered == 2 / 3
    assert [miss.case_index for miss in report.misses] == [1]  # the None is not a miss
    assert report.decisions == (
        {"relevant": True},
        {"relevant": False},
        {"relevant": None},
        {"relevant": True},
    )


def test_unlabelled_cases_do_not_count_but_are_decided():
    report = boolean_report([True, False, None], labels=[True, None, None])
    stats = report.questions["relevant"]
    assert (stats.correct, stats.undecided, stats.total) == (1, 0, 1)
    assert report.decisions[1] == {"relevant": False}
    assert report.misses == ()


def test_zero_denominators_are_none_never_zero():
    nothing = boolean_report([True, None], labels=[None, None]).questions["relevant"]
    assert (nothing.total, nothing.accuracy, nothing.accuracy_when_answered) == (0, None, None)
    assert nothing.mean_p_correct is None and nothing.p_correct == ()
    abstained = boolean_report([None, None]).questions["relevant"]
    assert abstained.accuracy == 0.0 and abstained.accuracy_when_answered is None


def test_an_empty_batch_is_valid():
    report = score(QUESTIONS, [], [], [], 0.0)
    assert all(stats.total == 0 for stats in report.questions.values())
    assert list(report.questions) == ["relevant", "tone", "quality"]


def test_p_correct_per_labelled_case_abstentions_included():
    cases = [
        LabelledCase(labels={"relevant": True}),
        LabelledCase(labels={"relevant": False}),
        LabelledCase(labels={}),
        LabelledCase(labels={"relevant": True}),
        LabelledCase(labels={"relevant": True}),
    ]
    answers = [
        {"relevant": Answer(True, 0.8, probabilities={"true": 0.8, "false": 0.2})},
        {"relevant": Answer(None, 0.5, probabilities={"true": 0.5, "false": 0.5})},
        {"relevant": Answer(True, 0.9, probabilities={"true": 0.9, "false": 0.1})},
        {"relevant": Answer(False, 0.7)},  # no probabilities reported
        {"relevant": Answer(False, 0.6, probabilities={"false": 0.6})},  # label's outcome absent
    ]
    stats = score([BOOLEAN], cases, answers, [0.0] * 5, 0.0).questions["relevant"]
    assert stats.p_correct == (0.8, 0.5, None, 0.0)
    assert stats.mean_p_correct == pytest.approx((0.8 + 0.5 + 0.0) / 3)


def test_choice_and_score_questions_and_misses():
    cases = [
        LabelledCase(labels={"tone": "calm", "quality": 2}, id="a"),
        LabelledCase(labels={"tone": "rude", "quality": 0}, id="b"),
    ]
    answers = [
        {
            "relevant": Answer(True, 0.9),
            "tone": Answer("calm", 0.9),
            "quality": Answer(1.5, 0.7, probabilities={"1": 0.5, "2": 0.5}),
        },
        {
            "relevant": Answer(None, 0.1),
            "tone": Answer("neutral", 0.6),
            "quality": Answer(0.49999999999999994, 0.8),
        },
    ]
    report = score(QUESTIONS, cases, answers, [5.0, 6.0], 11.0)
    assert report.questions["tone"].correct == 1
    assert report.questions["quality"].correct == 1  # 1.5 rounds to 2
    assert report.questions["quality"].p_correct == (0.5, None)
    assert [(m.case_id, m.question, m.label, m.decision) for m in report.misses] == [
        ("b", "tone", "rude", "neutral"),
        ("b", "quality", 0, 1),
    ]
    assert report.latencies_ms == (5.0, 6.0) and report.total_ms == 11.0


@pytest.mark.parametrize(
    ("answers", "latencies", "total", "message"),
    [
        (boolean_answers([True]), [1.0, 1.0], 2.0, "answers: 1 entries for 2 cases"),
        (boolean_answers([True, True]), [1.0], 2.0, "latencies_ms: 1 entries for 2 cases"),
        (boolean_answers([True, True]), [1.0, -1.0], 2.0, r"latencies_ms\[1\]"),
        (boolean_answers([True, True]), [1.0, float("nan")], 2.0, r"latencies_ms\[1\]"),
        (boolean_answers([True, True]), [1.0, 1.0], float("inf"), "total_ms"),
        (
            [{"relevant": Answer(True, 1)}, {}],
            [1.0, 1.0],
            2.0,
            r"answers\[1\]\.relevant: no answer",
        ),
        (
            [{"relevant": Answer(True, 1)}, {"relevant": Answer("yes", 1)}],
            [1.0, 1.0],
            2.0,
            r"answers\[1\]\.relevant\.value",
        ),
    ],
)
def test_mismatched_or_invalid_inputs_are_errors(answers, latencies, total, message):
    cases = [LabelledCase(labels={"relevant": True}), LabelledCase()]
    with pytest.raises(JudgeError, match=message):
        score([BOOLEAN], cases, answers, latencies, total)


def test_region_questions_cannot_be_scored():
    with pytest.raises(UnsupportedQuestion):
        score([Question.region("where")], [], [], [], 0.0)


@pytest.mark.slow
@given(labelled_batches())
def test_score_invariants(batch):
    cases, answers = batch
    report = score(QUESTIONS, cases, answers, [1.0] * len(cases), 1.0)
    misses_by_question = {name: 0 for name in report.questions}
    for miss in report.misses:
        misses_by_question[miss.question] += 1
        assert miss.question in cases[miss.case_index].labels
    for question in QUESTIONS:
        stats = report.questions[question.name]
        labelled = [case for case in cases if question.name in case.labels]
        assert stats.total == len(labelled) == len(stats.p_correct)
        assert stats.answered + stats.undecided == stats.total
        assert stats.correct + misses_by_question[question.name] == stats.answered
        for figure in (stats.accuracy, stats.accuracy_when_answered, stats.mean_p_correct):
            assert figure is None or 0.0 <= figure <= 1.0
        if stats.total:
            assert stats.accuracy == stats.correct / stats.total


# at_min_confidence


def test_threshold_makes_low_confidence_answers_abstentions_strictly_below():
    cases = [LabelledCase(labels={"relevant": True}) for _ in range(4)]
    answers = [
        {"relevant": Answer(True, 0.9)},
        {"relevant": Answer(False, 0.5)},  # exactly at the threshold: stays decided
        {"relevant": Answer(True, 0.49)},
        {"relevant": Answer(None, 0.95)},  # an earlier abstention stays one
    ]
    report = score([BOOLEAN], cases, answers, [1.0] * 4, 4.0)
    raised = at_min_confidence(report, 0.5)
    assert [d["relevant"] for d in raised.decisions] == [True, False, None, None]
    stats = raised.questions["relevant"]
    assert (stats.correct, stats.undecided, stats.total) == (1, 2, 4)
    assert raised.min_confidence == 0.5
    assert raised.latencies_ms == report.latencies_ms and raised.total_ms == report.total_ms
    # The original report is unchanged.
    assert [d["relevant"] for d in report.decisions] == [True, False, True, None]


def test_threshold_validates_its_argument():
    report = boolean_report([True])
    for bad in (-0.1, 1.1, float("nan"), True):
        with pytest.raises(JudgeError, match="min_confidence"):
            at_min_confidence(report, bad)


def test_threshold_calls_no_provider():
    # A report holds everything needed: the answers are re-decided, nothing is asked.
    report = boolean_report([True, None])
    assert at_min_confidence(report, 1.0).decisions == ({"relevant": None}, {"relevant": None})


@pytest.mark.slow
@given(labelled_batches(), confidences, confidences)
def test_thresholds_compose_as_their_maximum_and_only_add_abstentions(batch, first, second):
    cases, answers = batch
    report = score(QUESTIONS, cases, answers, [1.0] * len(cases), 1.0)
    twice = at_min_confidence(at_min_confidence(report, first), second)
    once = at_min_confidence(report, max(first, second))
    assert twice.decisions == once.decisions
    assert twice.min_confidence == once.min_confidence == max(first, second)
    for before, after in zip(report.decisions, once.decisions, strict=True):
        for name, decision in after.items():
            assert decision is None or decision == before[name]
    for name in report.questions:
        assert once.questions[name].undecided >= report.questions[name].undecided
    assert at_min_confidence(report, 0.0).decisions == report.decisions


# stability


def test_stability_worked_example():
    first = boolean_report([True, False, None])
    second = boolean_report([True, True, None])
    assert stability([first, second]) == {"relevant": 2 / 3}


def test_stability_of_one_report_is_one_and_of_no_case_is_none():
    assert stability([boolean_report([True, None, False])]) == {"relevant": 1.0}
    assert stability([boolean_report([]), boolean_report([])]) == {"relevant": None}


def test_stability_counts_abstention_against_decision_as_unstable():
    assert stability([boolean_report([None, None]), boolean_report([None, False])]) == {
        "relevant": 0.5
    }


def test_stability_ignores_labels():
    assert stability(
        [boolean_report([False], labels=[True]), boolean_report([False], labels=[None])]
    ) == {"relevant": 1.0}


def test_stability_errors_on_empty_and_misaligned_input():
    with pytest.raises(JudgeError, match="at least one report"):
        stability([])
    with pytest.raises(JudgeError, match=r"reports\[1\]: 2 cases"):
        stability([boolean_report([True]), boolean_report([True, True])])
    other = score([CHOICE], [LabelledCase()], [{"tone": Answer(None, 0)}], [0.0], 0.0)
    with pytest.raises(JudgeError, match=r"reports\[1\]: asks \['tone'\]"):
        stability([boolean_report([True]), other])
    named = score([BOOLEAN], [LabelledCase(id="x")], boolean_answers([True]), [0.0], 0.0)
    with pytest.raises(JudgeError, match="case 0 is 'x'"):
        stability([boolean_report([True]), named])


decision_lists = st.lists(st.sampled_from([True, False, None]), max_size=10)


@given(
    st.lists(decision_lists, min_size=1, max_size=4).filter(
        lambda lists: len({len(item) for item in lists}) == 1
    )
)
def test_stability_matches_a_direct_count(lists):
    reports = [boolean_report(decisions) for decisions in lists]
    result = stability(reports)["relevant"]
    count = len(lists[0])
    if count == 0:
        assert result is None
        return
    same = sum(1 for case in range(count) if len({str(d[case]) for d in lists}) == 1)
    assert result == same / count
    assert stability(list(reversed(reports)))["relevant"] == result
    assert stability([reports[0], reports[0]])["relevant"] == 1.0


def test_scores_and_stability_are_per_question():
    cases = [LabelledCase(labels={"quality": 2})]
    one = score(
        [SCORE, BOOLEAN],
        cases,
        [{"quality": Answer(2.0, 1), "relevant": Answer(True, 1)}],
        [0.0],
        0.0,
    )
    two = score(
        [SCORE, BOOLEAN],
        cases,
        [{"quality": Answer(1.6, 1), "relevant": Answer(None, 1)}],
        [0.0],
        0.0,
    )
    assert stability([one, two]) == {"quality": 1.0, "relevant": 0.0}


@st.composite
def labelled_counts(draw: st.DrawFn) -> tuple[int, int, int]:
    """``(total, abstained, correct)`` that a batch can have."""
    total = draw(st.integers(0, 50))
    abstained = draw(st.integers(0, total))
    return total, abstained, draw(st.integers(0, total - abstained))


@given(labelled_counts())
def test_a_question_and_a_flow_report_count_abstentions_alike(
    counts: tuple[int, int, int],
) -> None:
    """QuestionStats's undecided and FlowReport's stopped are the same
    abstention (one Accuracy): the same counts give the same figures, and
    accuracy is never 0 for want of a denominator."""
    total, abstained, correct = counts
    question = QuestionStats(correct=correct, undecided=abstained, total=total, p_correct=())
    flows = FlowReport(
        outcomes=(), expected=(), latencies_ms=(), total_ms=0.0,
        correct=correct, stopped=abstained, total=total, misses=(),
    )  # fmt: skip
    names = ("answered", "accuracy", "accuracy_when_answered")
    figures = {name: question.to_json()[name] for name in names}
    assert figures == {name: flows.to_json()[name] for name in names}
    assert figures["answered"] == total - abstained
    assert figures["accuracy"] == (correct / total if total else None)
    answered = total - abstained
    assert figures["accuracy_when_answered"] == (correct / answered if answered else None)
