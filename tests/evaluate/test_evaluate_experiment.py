"""Datasets, experiments (bounded concurrency, error policies), summaries, comparisons."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from truereward.evaluate import (
    CaseStatus,
    Component,
    CompositeEvaluator,
    Dataset,
    ErrorPolicy,
    EvaluationCase,
    EvaluationError,
    EvaluationReport,
    EvaluationVerdict,
    EvaluatorFunc,
    Experiment,
    ExperimentReport,
    ExperimentSummary,
    Metric,
    NotEvaluated,
    SuiteEvaluator,
)
from truereward.evaluate.scheduling import run_bounded

M = Metric(name="m")


def dataset(count: int) -> Dataset[int]:
    return Dataset(cases=[EvaluationCase(id=f"c{index}", subject=index) for index in range(count)])


# --- Dataset ----------------------------------------------------------------------


def test_dataset_takes_cases_positionally_or_by_keyword():
    cases = [EvaluationCase(id="a", subject=1), EvaluationCase(id="b", subject=2)]
    for built in (Dataset(cases), Dataset(cases=cases), Dataset(*cases), Dataset(iter(cases))):
        assert built.ids == ("a", "b") and len(built) == 2
    assert len(Dataset()) == 0


def test_dataset_ids_are_unique():
    with pytest.raises(ValueError, match="'a' appears twice"):
        Dataset(
            [
                EvaluationCase(id="a", subject=1),
                EvaluationCase(id="b", subject=2),
                EvaluationCase(id="a", subject=3),
            ]
        )


@pytest.mark.parametrize("case_id", ["", " a", "a\n", "x" * 513])
def test_case_ids_are_checked(case_id):
    with pytest.raises(ValueError, match="case id"):
        EvaluationCase(id=case_id, subject=None)


def test_dataset_owns_its_metadata():
    metadata = {"tags": ["math"], "difficulty": 3}
    case = EvaluationCase(id="a", subject=1, metadata=metadata)
    data = Dataset([case])
    metadata["tags"].append("changed")
    case.metadata["tags"].append("changed too")
    handed_out = data.cases[0]
    handed_out.metadata["tags"].append("and again")
    assert data.cases[0].metadata == {"tags": ["math"], "difficulty": 3}
    assert data["a"].metadata == {"tags": ["math"], "difficulty": 3}


@pytest.mark.parametrize(
    "metadata", [{"x": float("nan")}, {"x": object()}, {1: "a"}, {"x": {"y": float("inf")}}]
)
def test_case_metadata_is_strict_json(metadata):
    with pytest.raises((ValueError, TypeError)):
        EvaluationCase(id="a", subject=1, metadata=metadata)


def test_a_dataset_holds_cases_only():
    with pytest.raises(TypeError):
        Dataset(["a", "b"])  # type: ignore[list-item]
    with pytest.raises(TypeError):
        Dataset(EvaluationCase(id="a", subject=1), cases=[])


# --- Experiment: concurrency ---------------------------------------------------------


def test_default_bound_with_blocking_sync_cases_exactly_four_start_before_one_is_released():
    started: list[int] = []
    lock = threading.Lock()
    four = threading.Event()
    gates = {index: threading.Event() for index in range(5)}

    def blocking(index: int) -> EvaluationReport:
        with lock:
            started.append(index)
            if len(started) == 4:
                four.set()
        assert gates[index].wait(20), "never released"
        return EvaluationReport(metric=M, verdict="pass")

    outcome: dict[str, ExperimentReport] = {}
    experiment = Experiment(dataset=dataset(5), evaluator=EvaluatorFunc(blocking))
    runner = threading.Thread(target=lambda: outcome.setdefault("report", experiment.run()))
    runner.start()
    try:
        assert four.wait(20), f"only {started} started"
        time.sleep(0.3)  # room for a fifth to start if the bound were not 4
        with lock:
            assert sorted(started) == [0, 1, 2, 3]
        gates[2].set()
        deadline = time.monotonic() + 20
        while len(started) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert started[4] == 4
    finally:
        for gate in gates.values():
            gate.set()
        runner.join(20)
    assert outcome["report"].summary.passed == 5


def test_default_bound_with_blocking_async_cases_exactly_four_start_before_one_is_released():
    async def scenario() -> ExperimentReport:
        started: list[int] = []
        gates = {index: asyncio.Event() for index in range(5)}

        async def blocking(index: int) -> EvaluationReport:
            started.append(index)
            await gates[index].wait()
            return EvaluationReport(metric=M, verdict="pass")

        run = asyncio.ensure_future(Experiment(dataset(5), EvaluatorFunc(blocking)).run_async())
        for _ in range(200):  # many turns of the loop: a fifth would have started
            await asyncio.sleep(0)
        assert started == [0, 1, 2, 3]
        gates[0].set()
        for _ in range(200):
            await asyncio.sleep(0)
        assert started == [0, 1, 2, 3, 4]
        for gate in gates.values():
            gate.set()
        return await run

    assert asyncio.run(scenario()).summary.passed == 5


def test_max_concurrency_is_honoured_and_validated():
    state = {"running": 0, "peak": 0}

    async def measured(_index: int) -> EvaluationReport:
        state["running"] += 1
        state["peak"] = max(state["peak"], state["running"])
        await asyncio.sleep(0.005)
        state["running"] -= 1
        return EvaluationReport(metric=M, score=0.5)

    Experiment(dataset(9), EvaluatorFunc(measured), max_concurrency=3).run()
    assert state["peak"] == 3
    for bad in (-1, 1.5, True):
        with pytest.raises((ValueError, TypeError)):
            Experiment(dataset(1), EvaluatorFunc(measured), max_concurrency=bad)  # type: ignore[arg-type]
    assert Experiment(dataset(1), EvaluatorFunc(measured)).max_concurrency == 4


# --- Experiment: errors ---------------------------------------------------------------


def test_fail_fast_starts_nothing_after_the_first_error():
    started: list[int] = []

    def evaluate(index: int) -> EvaluationReport:
        started.append(index)
        if index == 1:
            raise RuntimeError("broken case")
        return EvaluationReport(metric=M, verdict="pass")

    report = Experiment(
        dataset(5), EvaluatorFunc(evaluate), max_concurrency=1, error_policy="fail_fast"
    ).run()
    assert started == [0, 1]
    statuses = [case.status for case in report.cases]
    assert statuses == [
        CaseStatus.EVALUATED,
        CaseStatus.ERROR,
        CaseStatus.NOT_EVALUATED,
        CaseStatus.NOT_EVALUATED,
        CaseStatus.NOT_EVALUATED,
    ]
    assert report.stopped_by == "c1"
    assert isinstance(report.cases[1].error, RuntimeError)
    assert all(isinstance(case.error, NotEvaluated) for case in report.cases[2:])
    summary = report.summary
    assert (summary.total, summary.evaluated, summary.passed) == (5, 1, 1)
    assert (summary.errors, summary.not_evaluated, summary.unjudged) == (4, 3, 0)


def test_fail_fast_cancels_running_cases_and_starts_no_more():
    async def scenario() -> tuple[ExperimentReport, list[int], list[int]]:
        started: list[int] = []
        cancelled: list[int] = []

        async def evaluate(index: int) -> EvaluationReport:
            started.append(index)
            if index == 0:
                await asyncio.sleep(0.01)
                raise RuntimeError("first error")
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.append(index)
                raise
            return EvaluationReport(metric=M, verdict="pass")

        report = await Experiment(
            dataset(7), EvaluatorFunc(evaluate), error_policy=ErrorPolicy.FAIL_FAST
        ).run_async()
        return report, started, cancelled

    report, started, cancelled = asyncio.run(scenario())
    assert started == [0, 1, 2, 3]
    assert sorted(cancelled) == [1, 2, 3]
    assert [case.status for case in report.cases] == [CaseStatus.ERROR] + [
        CaseStatus.NOT_EVALUATED
    ] * 6
    assert report.summary.errors == 7 and report.summary.not_evaluated == 6


def test_collect_evaluates_every_case_and_keeps_errors_apart_from_unjudged():
    def evaluate(index: int) -> EvaluationReport:
        if index == 0:
            raise ValueError("evaluator crashed")
        if index == 1:
            return "not a report"  # type: ignore[return-value]
        if index == 2:
            return EvaluationReport(metric=M, measurement=3.0)  # unjudged: no verdict
        return EvaluationReport(metric=M, verdict="pass" if index % 2 else "fail", score=index / 10)

    report = Experiment(dataset(6), EvaluatorFunc(evaluate)).run()
    summary = report.summary
    assert report.stopped_by is None
    assert [case.status for case in report.cases][:2] == [CaseStatus.ERROR, CaseStatus.ERROR]
    assert isinstance(report.cases[1].error, EvaluationError)
    assert (summary.total, summary.evaluated, summary.errors) == (6, 4, 2)
    assert (summary.passed, summary.failed, summary.unjudged) == (2, 1, 1)
    assert (
        report.cases[0].verdict is None and report.cases[2].verdict is EvaluationVerdict.UNSPECIFIED
    )
    assert report.cases[0].to_json()["error"] == "ValueError: evaluator crashed"
    assert report.cases[2].to_json() == {
        "id": "c2",
        "status": "evaluated",
        "report": {"metric": {"name": "m"}, "measurement": 3.0},
    }
    with pytest.warns(DeprecationWarning, match="use to_json"):
        assert report.cases[0].as_json() == report.cases[0].to_json()


def test_of_jobs_failing_together_the_first_in_order_is_raised():
    # Job 1 raises at once; job 0 a turn of the loop later, before the others
    # are stopped: job 0's error is the one raised, not the first in time.
    order: list[int] = []

    async def late() -> None:
        await asyncio.sleep(0)
        order.append(0)
        raise KeyError("job 0")

    async def early() -> None:
        order.append(1)
        raise ValueError("job 1")

    async def never() -> None:
        order.append(2)

    with pytest.raises(KeyError, match="job 0"):
        asyncio.run(run_bounded([late, early, never], 2))
    assert order == [1, 0]  # job 2 never started


def test_run_inside_a_running_loop_says_to_await_run_async():
    experiment = Experiment(
        dataset(1), EvaluatorFunc(lambda _i: EvaluationReport(metric=M, score=1.0))
    )

    async def inside() -> None:
        with pytest.raises(RuntimeError, match="run_async"):
            experiment.run()

    asyncio.run(inside())


def test_outcomes_keep_the_case_metadata_and_dataset_order():
    cases = [EvaluationCase(id=f"c{i}", subject=i, metadata={"i": i}) for i in range(6)]

    async def evaluate(index: int) -> EvaluationReport:
        await asyncio.sleep(0.001 * (6 - index))  # finish in reverse order
        return EvaluationReport(metric=M, verdict="pass")

    report = Experiment(Dataset(cases), EvaluatorFunc(evaluate)).run()
    assert [case.id for case in report.cases] == [f"c{i}" for i in range(6)]
    assert [case.metadata for case in report.cases] == [{"i": i} for i in range(6)]


# --- Summaries ---------------------------------------------------------------------


def test_summary_groups_by_full_metric_identity_and_walks_details():
    ms = Metric(name="latency", unit="ms", direction="lower_is_better")
    seconds = Metric(name="latency", unit="s", direction="lower_is_better")
    exact = Metric(namespace="qa", name="exact")

    def latency_ms(index: int) -> EvaluationReport:
        return EvaluationReport(metric=ms, measurement=10.0 * (index + 1))

    def latency_s(index: int) -> EvaluationReport:
        return EvaluationReport(metric=seconds, measurement=0.01 * (index + 1))

    def exactness(index: int) -> EvaluationReport:
        return EvaluationReport(
            metric=exact, verdict="pass" if index else "fail", score=float(index > 0)
        )

    suite = SuiteEvaluator(
        [EvaluatorFunc(latency_ms), EvaluatorFunc(latency_s), EvaluatorFunc(exactness)]
    )
    summary = Experiment(dataset(3), suite).run().summary
    by_name = {(str(item.metric), item.metric.unit): item for item in summary.metrics}
    assert set(by_name) == {("suite", ""), ("latency", "ms"), ("latency", "s"), ("qa/exact", "")}
    assert by_name[("latency", "ms")].measurements.mean == 20.0
    assert by_name[("latency", "s")].measurements.mean == pytest.approx(0.02)
    assert (
        by_name[("latency", "ms")].unjudged == 3 and not by_name[("latency", "ms")].scores.present
    )
    exact_summary = by_name[("qa/exact", "")]
    assert (exact_summary.passed, exact_summary.failed) == (2, 1)
    assert exact_summary.scores.count == 3
    assert summary.metric(exact) == exact_summary
    assert summary.metric(Metric(name="absent")) is None
    # The top-level verdicts: the suite fails on case 0 (exact failed), passes on the others.
    assert (summary.passed, summary.failed) == (2, 1)


outcomes = st.lists(
    st.sampled_from(["pass", "fail", "unjudged", "error"])
    | st.tuples(st.just("score"), st.floats(0, 1)),
    max_size=25,
)


@given(outcomes, st.sampled_from(["collect", "fail_fast"]), st.integers(1, 5))
def test_summary_invariants(plan, policy, bound):
    def evaluate(index: int) -> EvaluationReport:
        step = plan[index]
        if step == "error":
            raise RuntimeError("x")
        if step == "unjudged":
            return EvaluationReport(metric=M, feedback="qualitative")
        if isinstance(step, tuple):
            return EvaluationReport(metric=M, verdict="pass", score=step[1])
        return EvaluationReport(
            metric=M, verdict=step, details=[EvaluationReport(metric=Metric(name="d"), score=0.5)]
        )

    report = Experiment(dataset(len(plan)), EvaluatorFunc(evaluate), bound, policy).run()
    summary = report.summary
    assert summary.total == len(plan)
    assert summary.evaluated == summary.passed + summary.failed + summary.unjudged
    assert summary.total == summary.evaluated + summary.errors
    assert summary.not_evaluated <= summary.errors
    if policy == "collect":
        assert summary.errors == plan.count("error") and summary.not_evaluated == 0
        assert summary.unjudged == plan.count("unjudged")
    for item in summary.metrics:
        assert item.evaluated == item.passed + item.failed + item.unjudged
        assert item.scores.count <= item.evaluated
    assert summary == ExperimentSummary.model_validate(summary.model_dump())


def test_a_summary_whose_counts_do_not_add_up_cannot_be_built():
    with pytest.raises(ValueError, match="passed \\+ failed \\+ unjudged"):
        ExperimentSummary(total=3, evaluated=2, passed=1, failed=0, unjudged=0, errors=1)
    with pytest.raises(ValueError, match="evaluated \\+ errors"):
        ExperimentSummary(total=3, evaluated=2, passed=1, failed=1, unjudged=0, errors=0)


# --- Comparisons -------------------------------------------------------------------


def test_comparison_pairs_metrics_by_identity_and_leaves_absent_sides_absent():
    shared, only_base, only_cand = Metric(name="s"), Metric(name="b"), Metric(name="c")

    def base(index: int) -> EvaluationReport:
        return EvaluationReport(
            metric=Metric(name="suite"),
            details=[
                EvaluationReport(metric=shared, verdict="pass", score=0.5),
                EvaluationReport(metric=only_base, verdict="fail"),
            ],
        )

    def cand(index: int) -> EvaluationReport:
        if index == 2:
            raise RuntimeError("flaky provider")
        return EvaluationReport(
            metric=Metric(name="suite"),
            details=[
                EvaluationReport(metric=shared, verdict="pass", score=0.75),
                EvaluationReport(metric=only_cand, measurement=4.0),
            ],
        )

    baseline = Experiment(dataset(3), EvaluatorFunc(base)).run()
    candidate = Experiment(dataset(3), EvaluatorFunc(cand)).run()
    comparison = baseline.compare(candidate)
    assert (comparison.evaluated_delta, comparison.error_delta) == (-1, 1)
    assert comparison.unjudged_delta == -1  # the suite reports are unjudged
    by_metric = {str(item.metric): item for item in comparison.metrics}
    assert list(by_metric) == ["suite", "s", "b", "c"]
    assert by_metric["s"].score_delta.present and by_metric["s"].score_delta.mean == 0.25
    assert by_metric["s"].evaluated_delta == -1 and by_metric["s"].passed_delta == -1
    assert by_metric["b"].candidate is None and by_metric["b"].baseline is not None
    assert not by_metric["b"].score_delta.present and by_metric["b"].failed_delta == -3
    assert by_metric["c"].baseline is None
    assert not by_metric["c"].measurement_delta.present
    # A metric whose reports carry no score has no score delta, even on both sides.
    assert not by_metric["suite"].score_delta.present


def test_composite_inside_an_experiment_errors_rather_than_scoring_zero():
    def maybe_unscored(index: int) -> EvaluationReport:
        if index == 1:
            return EvaluationReport(metric=Metric(name="x"), verdict="pass")  # no score
        return EvaluationReport(metric=Metric(name="x"), verdict="pass", score=1.0)

    composite = CompositeEvaluator([Component(EvaluatorFunc(maybe_unscored))])
    report = Experiment(dataset(3), composite).run()
    assert [case.status for case in report.cases] == [
        CaseStatus.EVALUATED,
        CaseStatus.ERROR,
        CaseStatus.EVALUATED,
    ]
    composite_summary = report.summary.metrics[0]
    assert composite_summary.scores.count == 2 and composite_summary.scores.minimum == 1.0
