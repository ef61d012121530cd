"""run(): validation before any call, the warm-up and call budget, the
concurrency bound, latency from the slot, and all-or-nothing failure."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.calibrate_support import BOOLEAN, QUESTIONS
from truereward.calibrate import (
    Answer,
    JudgeError,
    LabelledCase,
    ProviderFailure,
    Question,
    RunOptions,
    ScriptedProvider,
    UnsupportedQuestion,
    ask,
    run,
    run_sync,
)


def always(value: bool | None = True, confidence: float = 0.9):
    def script(questions: Sequence[Question], state: Any) -> Mapping[str, Answer]:
        return {question.name: Answer(value, confidence) for question in questions}

    return script


def cases(count: int, label: bool | None = True) -> list[LabelledCase]:
    labels = {} if label is None else {"relevant": label}
    return [LabelledCase(state=f"s{index}", labels=labels) for index in range(count)]


@given(
    count=st.integers(0, 12),
    warmup=st.integers(0, 5),
    concurrency=st.integers(1, 6),
)
@settings(max_examples=60)
def test_call_budget_is_exact(count, warmup, concurrency):
    provider = ScriptedProvider(always())
    report = run_sync(
        provider, [BOOLEAN], cases(count), RunOptions(warmup=warmup, concurrency=concurrency)
    )
    assert provider.calls == min(warmup, count) + count
    assert len(report.decisions) == len(report.latencies_ms) == count
    assert provider.max_in_flight <= concurrency


def test_default_warmup_is_one_call_on_the_first_case():
    provider = ScriptedProvider(always())
    run_sync(provider, [BOOLEAN], cases(3))
    assert provider.calls == 4
    assert provider.states[0] == "s0"
    assert sorted(provider.states[1:]) == ["s0", "s1", "s2"]


def test_warmup_is_capped_at_the_case_count_and_none_for_no_case():
    provider = ScriptedProvider(always())
    run_sync(provider, [BOOLEAN], cases(2), RunOptions(warmup=5))
    assert provider.calls == 4
    empty = ScriptedProvider(always())
    report = run_sync(empty, [BOOLEAN], [], RunOptions(warmup=3))
    assert empty.calls == 0 and report.decisions == () and report.total_ms >= 0


class CountingProvider:
    """Slow and wrong on its first call, fast and right afterwards."""

    def __init__(self, first_delay_s: float) -> None:
        self.first_delay_s = first_delay_s
        self.calls = 0

    async def answer(self, questions: Sequence[Question], state: Any) -> Mapping[str, Answer]:
        self.calls += 1
        if self.calls == 1:
            await asyncio.sleep(self.first_delay_s)
            return {question.name: Answer(False, 0.1) for question in questions}
        return {question.name: Answer(True, 0.9) for question in questions}


def test_warmup_is_untimed_and_discarded():
    provider = CountingProvider(first_delay_s=0.3)
    report = run_sync(provider, [BOOLEAN], cases(3), RunOptions(warmup=1, concurrency=1))
    assert [d["relevant"] for d in report.decisions] == [True, True, True]
    assert report.total_ms < 300 and max(report.latencies_ms) < 300


@pytest.mark.parametrize("concurrency", [1, 2, 4, 7])
def test_concurrency_never_exceeds_the_bound_and_reaches_it(concurrency):
    provider = ScriptedProvider(always(), delay_s=lambda state: 0.002 + 0.003 * (hash(state) % 3))
    run_sync(provider, [BOOLEAN], cases(24), RunOptions(warmup=0, concurrency=concurrency))
    assert provider.max_in_flight == concurrency
    assert provider.calls == 24


def test_default_concurrency_is_four():
    provider = ScriptedProvider(always(), delay_s=0.01)
    run_sync(provider, [BOOLEAN], cases(12))
    assert provider.max_in_flight == 4


def test_latency_runs_from_the_slot_not_from_the_queue():
    # One slot, each call 60 ms: a queue-inclusive latency would grow to 240 ms.
    provider = ScriptedProvider(always(), delay_s=0.06)
    report = run_sync(provider, [BOOLEAN], cases(4), RunOptions(warmup=0, concurrency=1))
    assert all(55 <= latency < 200 for latency in report.latencies_ms), report.latencies_ms
    assert report.total_ms >= 4 * 55
    assert report.total_ms >= sum(report.latencies_ms) * 0.99


def test_a_failing_provider_aborts_with_no_report_and_drops_pending_work():
    provider = ScriptedProvider(always(), fail_on_call=3)
    with pytest.raises(ProviderFailure) as caught:
        run_sync(provider, [BOOLEAN], cases(10), RunOptions(warmup=0, concurrency=1))
    assert provider.calls == 3  # nothing after the failure was asked
    assert caught.value.case_index == 2 and not caught.value.warmup
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_a_failure_cancels_calls_in_flight():
    slow = {f"s{index}" for index in range(1, 10)}
    provider = ScriptedProvider(
        always(), delay_s=lambda state: 5.0 if state in slow else 0.01, fail_on_call=1
    )
    started = time.perf_counter()
    with pytest.raises(ProviderFailure):
        run_sync(provider, [BOOLEAN], cases(10), RunOptions(warmup=0, concurrency=4))
    assert time.perf_counter() - started < 2.0  # the 5 s calls were cancelled
    assert provider.calls == 4  # the slots filled once; no case was started after the failure
    assert provider.in_flight == 0 and provider.completed == 0


def test_a_failing_warmup_aborts_before_any_measured_call():
    provider = ScriptedProvider(always(), fail_on_call=1)
    with pytest.raises(ProviderFailure) as caught:
        run_sync(provider, [BOOLEAN], cases(5))
    assert caught.value.warmup and provider.calls == 1


@pytest.mark.parametrize(
    ("response", "message"),
    [
        ({}, "relevant: no answer"),
        (
            {"relevant": Answer(True, 1), "other": Answer(True, 1)},
            "other: an answer for a question",
        ),
        ({"relevant": Answer("yes", 1)}, "relevant.value"),
        ({"relevant": "true"}, "relevant.an Answer"),
        ("not a mapping", "answers: a mapping"),
    ],
)
def test_an_invalid_response_is_a_failure_never_an_abstention(response, message):
    provider = ScriptedProvider(lambda questions, state: response)
    with pytest.raises(ProviderFailure, match=message):
        run_sync(provider, [BOOLEAN], cases(2), RunOptions(warmup=0))


def test_a_call_over_its_timeout_is_a_failure():
    provider = ScriptedProvider(always(), delay_s=2.0)
    started = time.perf_counter()
    with pytest.raises(ProviderFailure, match=r"within 0\.05 s"):
        run_sync(provider, [BOOLEAN], cases(2), RunOptions(warmup=0, call_timeout_s=0.05))
    assert time.perf_counter() - started < 1.5


@pytest.mark.parametrize(
    ("questions", "case_list", "options", "error"),
    [
        ([BOOLEAN], [LabelledCase(labels={"relevant": "yes"})], None, JudgeError),
        ([BOOLEAN], [LabelledCase(labels={"unknown": True})], None, JudgeError),
        ([Question.region("where")], [LabelledCase()], None, UnsupportedQuestion),
        ([BOOLEAN, BOOLEAN], [LabelledCase()], None, JudgeError),
        ([BOOLEAN], [LabelledCase()], {"warmup": 1}, JudgeError),
    ],
)
def test_validation_comes_before_any_call(questions, case_list, options, error):
    provider = ScriptedProvider(always())
    with pytest.raises(error):
        run_sync(provider, questions, [*cases(3), *case_list], options)
    assert provider.calls == 0


@pytest.mark.parametrize(
    "kwargs", [{"warmup": -1}, {"concurrency": 0}, {"concurrency": True}, {"call_timeout_s": 0}]
)
def test_bad_options_are_rejected(kwargs):
    with pytest.raises(JudgeError, match="options"):
        RunOptions(**kwargs)


def test_a_provider_without_answer_is_rejected():
    with pytest.raises(JudgeError, match="provider"):
        run_sync(object(), [BOOLEAN], cases(1))  # type: ignore[arg-type]


def test_run_is_a_coroutine_and_scores_what_it_asked():
    async def main():
        answers = {
            "s0": {
                "relevant": Answer(True, 0.9),
                "tone": Answer("calm", 0.8),
                "quality": Answer(1.5, 0.7),
            },
            "s1": {
                "relevant": Answer(None, 0.4),
                "tone": Answer("rude", 0.8),
                "quality": Answer(0.2, 0.7),
            },
        }
        provider = ScriptedProvider.from_table(answers)
        labelled = [
            LabelledCase(state="s0", labels={"relevant": True, "quality": 2}),
            LabelledCase(state="s1", labels={"tone": "calm"}),
        ]
        return await run(provider, QUESTIONS, labelled)

    report = asyncio.run(main())
    assert report.decisions[0] == {"relevant": True, "tone": "calm", "quality": 2}
    assert report.questions["relevant"].correct == 1
    assert report.questions["tone"].correct == 0 and len(report.misses) == 1


def test_ask_is_one_validated_call():
    provider = ScriptedProvider(always(None, 0.3))
    answers = asyncio.run(ask(provider, [BOOLEAN], "state"))
    assert answers["relevant"].undecided and provider.calls == 1
    failing = ScriptedProvider(always(), fail_on_call=1)
    with pytest.raises(ProviderFailure) as caught:
        asyncio.run(ask(failing, [BOOLEAN], "state"))
    assert caught.value.case_index is None


def test_a_provider_raising_timeout_itself_is_a_failure_of_its_own():
    provider = ScriptedProvider(always(), fail_on_call=1, failure=TimeoutError("upstream"))
    with pytest.raises(ProviderFailure, match="the provider failed: TimeoutError: upstream"):
        run_sync(provider, [BOOLEAN], cases(1), RunOptions(warmup=0, call_timeout_s=5))


def test_cancelling_a_run_cancels_its_calls():
    provider = ScriptedProvider(always(), delay_s=5.0)

    async def main():
        task = asyncio.create_task(run(provider, [BOOLEAN], cases(8), RunOptions(warmup=0)))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    started = time.perf_counter()
    asyncio.run(main())
    assert time.perf_counter() - started < 2.0
    assert provider.calls == 4 and provider.in_flight == 0 and provider.completed == 0
