"""Running a judge over labelled cases: bounded, timed, all-or-nothing.

:func:`run` (a coroutine; :func:`run_sync` for synchronous callers)
validates everything first, warms up, then makes one timed call per case
within a concurrency bound, and scores; any provider failure aborts the
run with :class:`~truereward.calibrate.ProviderFailure` (never an
abstention, no partial report, no retry). docs/calibrate.md, "Running a
judge: run", gives the order of work and the call budget.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

from ..evaluate.scheduling import run_bounded
from ..judging.answers import Answer
from ..judging.numbers import positive_seconds
from ..judging.provider import Prepared, Provider, ask_prepared, check_provider
from ..judging.questions import Question
from .case import LabelledCase, check_cases
from .errors import CalibrationError
from .report import Calibration, score

__all__ = ["RunOptions", "run", "run_sync"]


@dataclass(frozen=True, slots=True)
class RunOptions:
    """The work budget of a run.

    ``warmup``: untimed calls before measuring (>= 0; capped at the case
    count). ``concurrency``: measured calls in flight at most (>= 1).
    ``call_timeout_s``: a call taking longer is a provider failure (``None``:
    no limit of our own; the provider may have its own).
    """

    warmup: int = 1
    concurrency: int = 4
    call_timeout_s: float | None = None

    def __post_init__(self) -> None:
        for name, least in (("warmup", 0), ("concurrency", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise CalibrationError(f"options.{name}: an integer >= {least}, got {value!r}")
        positive_seconds(self.call_timeout_s, "options.call_timeout_s")


async def run(
    provider: Provider,
    questions: Sequence[Question],
    cases: Sequence[LabelledCase],
    options: RunOptions | None = None,
) -> Calibration:
    """Ask ``provider`` about every case and score the answers (see the
    module documentation for the order of work, the budget and failures)."""
    prepared = Prepared(questions)
    checked = check_cases(prepared.asked, cases, prepared.deciders)
    settings = RunOptions() if options is None else options
    if not isinstance(settings, RunOptions):
        raise CalibrationError(f"options: a RunOptions, got {type(settings).__name__}")
    check_provider(provider)
    # One checked call about a case (warm-up or measured).
    ask_case = functools.partial(
        ask_prepared, provider, prepared, timeout_s=settings.call_timeout_s
    )

    for index in range(min(settings.warmup, len(checked))):
        await ask_case(checked[index].state, case_index=index, warmup=True)

    latencies = [0.0] * len(checked)

    def call(index: int) -> Callable[[], Awaitable[Mapping[str, Answer]]]:
        async def timed() -> Mapping[str, Answer]:
            # Started when a slot is free: a case's latency is its call's alone.
            started = time.perf_counter()
            answers = await ask_case(checked[index].state, case_index=index, warmup=False)
            latencies[index] = (time.perf_counter() - started) * 1000.0
            return answers

        return timed

    # Any failure cancels the calls in flight and drops the cases not started;
    # the lowest case's failure is raised, whatever the scheduling.
    started = time.perf_counter()
    answers = await run_bounded(
        [call(index) for index in range(len(checked))], settings.concurrency
    )
    total_ms = (time.perf_counter() - started) * 1000.0
    return score(prepared.asked, checked, answers, latencies, total_ms)


def run_sync(
    provider: Provider,
    questions: Sequence[Question],
    cases: Sequence[LabelledCase],
    options: RunOptions | None = None,
) -> Calibration:
    """:func:`run` for synchronous code (``asyncio.run``; not from inside a
    running event loop)."""
    return asyncio.run(run(provider, questions, cases, options))
