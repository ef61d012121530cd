"""Evaluators: EvaluatorFunc, CompositeEvaluator, SuiteEvaluator, ProjectionEvaluator."""

from __future__ import annotations

import asyncio
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truereward.evaluate import (
    Component,
    CompositeEvaluator,
    EvaluationError,
    EvaluationReport,
    EvaluationVerdict,
    Evaluator,
    EvaluatorFunc,
    Metric,
    ProjectionEvaluator,
    SuiteEvaluator,
    evaluate_sync,
)

LARGEST = sys.float_info.max


def fixed(name: str, **outcome: object) -> EvaluatorFunc[object]:
    report = EvaluationReport(metric=Metric(name=name), **outcome)
    return EvaluatorFunc(lambda _subject: report)


def worked_components() -> list[Component[object]]:
    return [
        Component(fixed("a", verdict="pass", score=1.0), weight=3, required=True),
        Component(fixed("b", verdict="fail", score=0.5), weight=1),
    ]


@pytest.mark.parametrize(
    ("policy", "minimum", "verdict"),
    [
        ("at_least", 1, EvaluationVerdict.PASS),
        ("any", None, EvaluationVerdict.PASS),
        ("all", None, EvaluationVerdict.FAIL),
    ],
)
def test_composite_worked_numbers(policy, minimum, verdict):
    composite = CompositeEvaluator(
        components=worked_components(), pass_policy=policy, minimum_passed=minimum
    )
    report = evaluate_sync(composite, "subject")
    assert report.score == 0.875
    assert report.verdict is verdict
    assert [str(item.metric) for item in report.details] == ["a", "b"]
    assert report.metric.name == "composite"


def test_a_zero_weight_means_one():
    composite = CompositeEvaluator(
        [
            Component(fixed("a", verdict="pass", score=1.0), weight=0),
            Component(fixed("b", verdict="pass", score=0.0), weight=1),
        ]
    )
    assert evaluate_sync(composite, None).score == 0.5


@pytest.mark.parametrize(("policy", "minimum"), [("all", None), ("any", None), ("at_least", 1)])
def test_required_components_must_pass_under_every_policy(policy, minimum):
    composite = CompositeEvaluator(
        [
            Component(fixed("a", verdict="fail", score=0.9), required=True),
            Component(fixed("b", verdict="pass", score=1.0)),
            Component(fixed("c", verdict="pass", score=1.0)),
        ],
        pass_policy=policy,
        minimum_passed=minimum,
    )
    report = evaluate_sync(composite, None)
    assert report.verdict is EvaluationVerdict.FAIL
    assert "required and not passed: a" in report.feedback


def test_at_least_counts_passes():
    components = [
        Component(fixed("a", verdict="pass", score=1.0)),
        Component(fixed("b", verdict="pass", score=1.0)),
        Component(fixed("c", verdict="fail", score=0.0)),
    ]
    assert (
        evaluate_sync(CompositeEvaluator(components, "at_least", 2), 0).verdict
        is EvaluationVerdict.PASS
    )
    assert (
        evaluate_sync(CompositeEvaluator(components, "at_least", 3), 0).verdict
        is EvaluationVerdict.FAIL
    )


@pytest.mark.parametrize(
    ("outcome", "missing"),
    [
        ({"verdict": "pass"}, "a score"),
        ({"score": 0.5}, "a decided verdict"),
        ({"measurement": 3.0}, "a score and a decided verdict"),
        ({"verdict": "unspecified", "score": 0.5}, "a decided verdict"),
    ],
)
def test_a_child_without_score_or_decided_verdict_is_an_error_never_a_zero(outcome, missing):
    composite = CompositeEvaluator(
        [Component(fixed("ok", verdict="pass", score=1.0)), Component(fixed("bad", **outcome))]
    )
    with pytest.raises(EvaluationError, match=f"did not give {missing}"):
        evaluate_sync(composite, None)


def test_a_child_that_raises_makes_the_composite_raise_and_cancels_the_others():
    cancelled = []

    async def slow(_subject: object) -> EvaluationReport:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return EvaluationReport(metric=Metric(name="slow"), verdict="pass", score=1.0)

    async def broken(_subject: object) -> EvaluationReport:
        await asyncio.sleep(0)
        raise RuntimeError("provider down")

    composite = CompositeEvaluator(
        [Component(EvaluatorFunc(slow)), Component(EvaluatorFunc(broken))]
    )
    with pytest.raises(RuntimeError, match="provider down"):
        evaluate_sync(composite, None)
    assert cancelled == [True]


def test_a_child_returning_a_non_report_is_an_error():
    composite = CompositeEvaluator([Component(EvaluatorFunc(lambda _s: 0.0))])  # type: ignore[arg-type]
    with pytest.raises(EvaluationError, match="not a EvaluationReport"):
        evaluate_sync(composite, None)


def test_the_weighted_mean_does_not_overflow():
    composite = CompositeEvaluator(
        [
            Component(fixed("a", verdict="pass", score=1.0), weight=LARGEST),
            Component(fixed("b", verdict="pass", score=0.5), weight=LARGEST),
        ]
    )
    assert evaluate_sync(composite, None).score == 0.75


@given(
    st.lists(
        st.tuples(
            st.floats(0, 1),
            st.floats(0, 1e300) | st.just(0.0) | st.just(LARGEST),
            st.booleans(),
            st.booleans(),
        ),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(["all", "any", "at_least"]),
    st.integers(1, 6),
)
def test_composite_matches_its_definition(children, policy, minimum):
    components = [
        Component(
            fixed(f"c{index}", verdict="pass" if passed else "fail", score=score),
            weight=weight,
            required=required,
        )
        for index, (score, weight, passed, required) in enumerate(children)
    ]
    minimum = min(minimum, len(children)) if policy == "at_least" else None
    report = evaluate_sync(CompositeEvaluator(components, policy, minimum), None)
    scores = [score for score, *_ in children]
    assert min(scores) <= report.score <= max(scores)
    passes = sum(passed for _, _, passed, _ in children)
    required_ok = all(passed for _, _, passed, required in children if required)
    policy_ok = {
        "all": passes == len(children),
        "any": passes >= 1,
        "at_least": passes >= (minimum or 0),
    }[policy]
    assert report.verdict is (
        EvaluationVerdict.PASS if required_ok and policy_ok else EvaluationVerdict.FAIL
    )
    if len({weight or 1.0 for _, weight, _, _ in children}) == 1:
        assert report.score == pytest.approx(sum(scores) / len(scores))


@pytest.mark.parametrize(
    ("policy", "minimum"),
    [("at_least", None), ("at_least", 0), ("at_least", 3), ("all", 1), ("any", 2), ("most", None)],
)
def test_invalid_pass_policies_are_refused(policy, minimum):
    with pytest.raises(ValueError, match=r"minimum_passed|not a valid PassPolicy"):
        CompositeEvaluator(worked_components(), policy, minimum)


@pytest.mark.parametrize("weight", [-1.0, float("nan"), float("inf")])
def test_invalid_weights_are_refused(weight):
    with pytest.raises(ValueError, match="finite and >= 0"):
        Component(fixed("a", verdict="pass", score=1.0), weight=weight)


def test_an_empty_composite_or_suite_is_refused():
    with pytest.raises(ValueError, match="at least one component"):
        CompositeEvaluator([])
    with pytest.raises(ValueError, match="at least one evaluator"):
        SuiteEvaluator([])


def test_composite_identity_records_its_make_up():
    one = evaluate_sync(CompositeEvaluator(worked_components(), "any"), None).metric
    other = evaluate_sync(CompositeEvaluator(worked_components(), "all"), None).metric
    reweighted = [
        Component(c.evaluator, weight=1, required=c.required) for c in worked_components()
    ]
    third = evaluate_sync(CompositeEvaluator(reweighted, "any"), None).metric
    assert len({one, other, third}) == 3
    assert one.parameters["pass_policy"] == "any"
    assert one.parameters["components"][0] == {
        "metric": {"name": "a"},
        "weight": 3.0,
        "required": True,
    }


def _counting_children(count: int) -> tuple[list[EvaluatorFunc[object]], dict[str, int]]:
    state = {"running": 0, "peak": 0}

    async def child(_subject: object) -> EvaluationReport:
        state["running"] += 1
        state["peak"] = max(state["peak"], state["running"])
        await asyncio.sleep(0.01)
        state["running"] -= 1
        return EvaluationReport(metric=Metric(name="c"), verdict="pass", score=1.0)

    return [EvaluatorFunc(child) for _ in range(count)], state


def test_composite_and_suite_bound_their_concurrency():
    children, state = _counting_children(7)
    evaluate_sync(CompositeEvaluator([Component(c) for c in children], max_concurrency=2), None)
    assert state["peak"] == 2
    children, state = _counting_children(7)
    evaluate_sync(SuiteEvaluator(children), None)
    assert state["peak"] == 4  # the default


@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        (["pass", "fail", None], EvaluationVerdict.FAIL),
        (["pass", None], EvaluationVerdict.PASS),
        (["pass", "pass"], EvaluationVerdict.PASS),
        ([None, None], EvaluationVerdict.UNSPECIFIED),
        (["fail"], EvaluationVerdict.FAIL),
    ],
)
def test_suite_verdict_rule(verdicts, expected):
    children = [
        fixed(f"m{index}", verdict=verdict) if verdict else fixed(f"m{index}", measurement=1.0)
        for index, verdict in enumerate(verdicts)
    ]
    report = evaluate_sync(SuiteEvaluator(evaluators=children), None)
    assert report.verdict is expected
    assert len(report.details) == len(children)
    assert report.score is None


def test_suite_keeps_every_child_and_records_their_order():
    a, b = fixed("a", measurement=1.0), fixed("b", feedback="fine")
    ab = evaluate_sync(SuiteEvaluator([a, b]), None)
    ba = evaluate_sync(SuiteEvaluator([b, a]), None)
    assert [str(item.metric) for item in ab.details] == ["a", "b"]
    assert ab.metric.parameters == {"metrics": [{"name": "a"}, {"name": "b"}]}
    assert ab.metric != ba.metric


def test_suite_child_error_propagates():
    def broken(_subject: object) -> EvaluationReport:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        evaluate_sync(SuiteEvaluator([fixed("a", verdict="pass"), EvaluatorFunc(broken)]), None)


def test_projection_evaluates_a_part_of_the_subject():
    def length(answer: str) -> EvaluationReport:
        return EvaluationReport(metric=Metric(name="length"), measurement=len(answer))

    async def answer_of(run: dict[str, str]) -> str:
        return run["answer"]

    sync = ProjectionEvaluator(EvaluatorFunc(length), lambda run: run["answer"])
    asynchronous = ProjectionEvaluator(EvaluatorFunc(length), answer_of)
    for evaluator in (sync, asynchronous):
        assert evaluate_sync(evaluator, {"answer": "four", "log": "..."}).measurement == 4.0
    with pytest.raises(KeyError):
        evaluate_sync(sync, {"log": "no answer"})


class Plain:
    """An evaluator class with a synchronous evaluate."""

    def evaluate(self, subject: int) -> EvaluationReport:
        return EvaluationReport(metric=Metric(name="plain"), verdict="pass" if subject else "fail")


class Awaiting:
    """An evaluator class with an async evaluate."""

    async def evaluate(self, subject: int) -> EvaluationReport:
        await asyncio.sleep(0)
        return EvaluationReport(metric=Metric(name="awaiting"), score=subject / 10)


def test_evaluators_may_be_sync_or_async_classes_or_functions():
    assert isinstance(Plain(), Evaluator) and isinstance(Awaiting(), Evaluator)
    assert evaluate_sync(Plain(), 1).verdict is EvaluationVerdict.PASS
    assert evaluate_sync(Awaiting(), 3).score == 0.3
    suite = SuiteEvaluator([Plain(), Awaiting(), EvaluatorFunc(lambda s: Plain().evaluate(s))])
    assert evaluate_sync(suite, 0).verdict is EvaluationVerdict.FAIL


def test_evaluator_func_refuses_a_non_callable_and_components_a_non_evaluator():
    with pytest.raises(TypeError):
        EvaluatorFunc(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Component(object())  # type: ignore[arg-type]
