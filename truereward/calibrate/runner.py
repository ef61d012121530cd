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
import math
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from ..judging.answers import Answer
from ..judging.errors import ProviderFailure
from ..judging.numbers import positive_seconds
from ..judging.provider import Prepared, Provider, ask_prepared, check_provider
from ..judging.questions import Question
from .case import Case, check_cases
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
    cases: Sequence[Case],
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
    timeout = settings.call_timeout_s

    for index in range(min(settings.warmup, len(checked))):
        await ask_prepared(
            provider,
            prepared,
            checked[index].state,
            timeout_s=timeout,
            case_index=index,
            warmup=True,
        )

    answers: list[Mapping[str, Answer]] = [{} for _ in checked]
    latencies = [0.0] * len(checked)
    pending: Iterator[int] = iter(range(len(checked)))

    async def worker() -> None:
        # Each worker is one slot: it takes the next case only when free, so
        # at most `concurrency` calls are in flight and a case's latency
        # starts when its call got a slot.
        for index in pending:
            started = time.perf_counter()
            answers[index] = await ask_prepared(
                provider,
                prepared,
                checked[index].state,
                timeout_s=timeout,
                case_index=index,
                warmup=False,
            )
            latencies[index] = (time.perf_counter() - started) * 1000.0

    started = time.perf_counter()
    workers = [
        asyncio.create_task(worker()) for _ in range(min(settings.concurrency, len(checked)))
    ]
    try:
        if workers:
            await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        # On a failure (or if this run is cancelled) nothing else may run on:
        # cancel the calls in flight; cases not started are dropped.
        for task in workers:
            if not task.done():
                task.cancel()
        if workers:
            await asyncio.gather(*workers, return_exceptions=True)
    total_ms = (time.perf_counter() - started) * 1000.0
    failures = [
        task.exception()
        for task in workers
        if not task.cancelled() and task.exception() is not None
    ]
    if failures:
        # The lowest case index, so that which failure is reported does not
        # depend on scheduling when several calls fail together.
        first = min(
            failures,
            key=lambda error: (
                error.case_index
                if isinstance(error, ProviderFailure) and error.case_index is not None
                else math.inf
            ),
        )
        raise first  # type: ignore[misc]
    return score(prepared.asked, checked, answers, latencies, total_ms)


def run_sync(
    provider: Provider,
    questions: Sequence[Question],
    cases: Sequence[Case],
    options: RunOptions | None = None,
) -> Calibration:
    """:func:`run` for synchronous code (``asyncio.run``; not from inside a
    running event loop)."""
    return asyncio.run(run(provider, questions, cases, options))
