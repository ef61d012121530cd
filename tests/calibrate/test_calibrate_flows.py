"""run_flow() and score_flows(): sequential flows with traces, completed or
stopped, aborting on failure; inconsistent outcomes refused."""

from __future__ import annotations

import pytest

from truereward.calibrate import (
    Answer,
    FlowFailure,
    FlowOutcome,
    FlowStatus,
    JudgeError,
    TraceStep,
    run_flow,
    run_flow_sync,
    score_flows,
)


def completed(value, *steps):
    trace = [TraceStep(name) for name in steps] or [TraceStep("only")]
    return FlowOutcome.completed(value, trace)


def stopped(at="check"):
    return FlowOutcome.stopped(at, [TraceStep(at, Answer(None, 0.2))], why="judge abstained")


def test_score_flows_counts_completed_stopped_and_misses():
    outcomes = [completed("refund"), completed("deny"), stopped(), completed("refund"), stopped()]
    expected = ["refund", "refund", "refund", None, None]
    report = score_flows(outcomes, expected, [1.0] * 5, 5.0)
    assert (report.correct, report.stopped, report.total, report.answered) == (1, 1, 3, 2)
    assert report.accuracy == pytest.approx(1 / 3)
    assert report.accuracy_when_answered == 0.5
    assert [(miss.index, miss.expected, miss.value) for miss in report.misses] == [
        (1, "refund", "deny")
    ]


def test_score_flows_zero_denominators_are_none():
    report = score_flows([stopped()], [None], [0.0], 0.0)
    assert report.total == 0 and report.accuracy is None and report.accuracy_when_answered is None
    report = score_flows([stopped()], ["x"], [0.0], 0.0)
    assert report.accuracy == 0.0 and report.accuracy_when_answered is None


def test_score_flows_compares_type_and_value():
    report = score_flows([completed(1), completed(True)], [True, 1], [0.0, 0.0], 0.0)
    assert report.correct == 0 and len(report.misses) == 2


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: FlowOutcome(FlowStatus.COMPLETED, None, ()), "a completed flow has a value"),
        (lambda: FlowOutcome(FlowStatus.STOPPED, "x", (TraceStep("a"),), "a"), "no value"),
        (lambda: FlowOutcome.stopped("b", [TraceStep("a")]), "names the step"),
        (lambda: FlowOutcome(FlowStatus.COMPLETED, "x", (), stopped_at="a"), "did not stop"),
        (lambda: FlowOutcome("failed", None, ()), "'completed' or 'stopped'"),  # type: ignore[arg-type]
        (lambda: FlowOutcome.completed(float("nan"), []), "finite"),
        (lambda: FlowOutcome.completed("x", ["step"]), r"trace\[0\]: a TraceStep"),  # type: ignore[list-item]
    ],
)
def test_inconsistent_outcomes_are_refused(build, message):
    with pytest.raises(JudgeError, match=message):
        build()


def test_a_trace_with_a_failed_step_is_never_scored():
    failed = FlowOutcome.completed("x", [TraceStep("ask", error="HTTP 500")])
    with pytest.raises(JudgeError, match=r"outcomes\[0\]: step 'ask' failed"):
        score_flows([failed], ["x"], [0.0], 0.0)


def test_score_flows_lengths_must_match():
    with pytest.raises(JudgeError, match="expected: 0 entries for 1 outcomes"):
        score_flows([completed("x")], [], [0.0], 0.0)
    with pytest.raises(JudgeError, match="latencies_ms: 2 entries for 1 outcomes"):
        score_flows([completed("x")], ["x"], [0.0, 1.0], 0.0)
    # Each latency and the total checked as score() checks them (check_timing).
    with pytest.raises(JudgeError, match=r"latencies_ms\[0\]: a finite number of milliseconds"):
        score_flows([completed("x")], ["x"], [float("nan")], 0.0)
    with pytest.raises(JudgeError, match="total_ms: a finite number of milliseconds"):
        score_flows([completed("x")], ["x"], [0.0], -1.0)


def test_run_flow_runs_in_order_one_at_a_time_and_keeps_traces():
    running = []
    order = []

    def flow(index, result):
        async def go():
            running.append(index)
            assert len(running) == 1  # sequential
            order.append(index)
            running.remove(index)
            return result

        return go

    outcomes = [completed("a", "s1", "s2"), stopped("s1"), completed("b", "s1")]
    report = run_flow_sync(
        [flow(i, outcome) for i, outcome in enumerate(outcomes)], ["a", "a", "a"]
    )
    assert order == [0, 1, 2]
    assert report.outcomes == tuple(outcomes)
    assert [step.name for step in report.outcomes[0].trace] == ["s1", "s2"]
    assert (report.correct, report.stopped, len(report.misses)) == (1, 1, 1)
    assert len(report.latencies_ms) == 3 and report.total_ms >= sum(report.latencies_ms) * 0.99


def test_run_flow_aborts_on_the_first_failure_with_no_report():
    ran = []

    def ok(index):
        async def go():
            ran.append(index)
            return completed("x")

        return go

    async def boom():
        ran.append("boom")
        raise ConnectionError("judge unreachable")

    with pytest.raises(FlowFailure) as caught:
        run_flow_sync([ok(0), boom, ok(2)], ["x", "x", "x"])
    assert ran == [0, "boom"] and caught.value.flow_index == 1
    assert isinstance(caught.value.__cause__, ConnectionError)


def test_run_flow_aborts_on_a_failed_trace_or_a_non_outcome():
    async def failed_trace():
        return FlowOutcome.completed("x", [TraceStep("ask", error="timeout")])

    async def not_an_outcome():
        return "x"

    with pytest.raises(FlowFailure, match="step 'ask' failed"):
        run_flow_sync([failed_trace], ["x"])
    with pytest.raises(FlowFailure, match="returned str"):
        run_flow_sync([not_an_outcome], ["x"])


def test_run_flow_validates_before_running():
    ran = []

    async def flow():
        ran.append(1)
        return completed("x")

    with pytest.raises(JudgeError, match="expected: 1 entries for 2 flows"):
        run_flow_sync([flow, flow], ["x"])
    with pytest.raises(JudgeError, match=r"flows\[1\]"):
        run_flow_sync([flow, "not callable"], ["x", "x"])  # type: ignore[list-item]
    assert ran == []


def test_run_flow_is_a_coroutine():
    import asyncio

    async def flow():
        return completed(3)

    report = asyncio.run(run_flow([flow], [3]))
    assert report.correct == 1
