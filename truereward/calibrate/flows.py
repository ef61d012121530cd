"""Multi-step flows: a judge asked several things in sequence, with a trace.

A flow is the caller's coroutine function that asks its questions step by
step and returns a :class:`FlowOutcome`, completed with a value or stopped
at a step (an abstention), with its :class:`TraceStep` list; a failed step
is not an outcome. :func:`run_flow` (:func:`run_flow_sync`) runs flows one
after another, timed, and aborts on the first failure
(:class:`~truereward.calibrate.FlowFailure`, no report); :func:`score_flows`
scores them. docs/calibrate.md, "Multi-step flows".
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, TypeAlias

from pydantic import Field

from ..judging.answers import Answer, same_decision
from ..judging.numbers import finite_float
from ..judging.questions import check_name
from ..util.dumped import Dumped
from ..util.frozen import is_absent, is_empty
from .errors import CalibrationError, FlowFailure
from .report import Accuracy, check_timing

__all__ = [
    "Flow",
    "FlowMiss",
    "FlowOutcome",
    "FlowReport",
    "FlowStatus",
    "FlowValue",
    "TraceStep",
    "run_flow",
    "run_flow_sync",
    "score_flows",
]

#: What a completed flow returns and what it is labelled with.
FlowValue: TypeAlias = bool | int | float | str

#: A flow: a coroutine function without arguments returning its outcome.
Flow: TypeAlias = Callable[[], Awaitable["FlowOutcome"]]


def _check_value(value: object, where: str) -> FlowValue:
    if isinstance(value, bool | str):
        return value
    if isinstance(value, int | float) and finite_float(value) is not None:
        return value
    raise CalibrationError(f"{where}: a boolean, string or finite number, got {value!r}")


class FlowStatus(StrEnum):
    """How a flow ended."""

    COMPLETED = "completed"
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class TraceStep(Dumped):
    """One step of a flow: its name, the judge's answer if it asked one,
    a note, and ``error`` when the step failed (such a trace is refused by
    :func:`score_flows`: failures abort, they are not scored)."""

    name: str
    answer: Annotated[Answer | None, Field(exclude_if=is_absent)] = None
    note: Annotated[str, Field(exclude_if=is_empty)] = ""
    error: Annotated[str, Field(exclude_if=is_empty)] = ""

    def __post_init__(self) -> None:
        check_name(self.name, "a step name")
        if self.answer is not None and not isinstance(self.answer, Answer):
            raise CalibrationError(f"{self.name}: answer is an Answer or None")


@dataclass(frozen=True, slots=True)
class FlowOutcome(Dumped):
    """How one flow ended. Completed: ``value`` is set and ``stopped_at`` is
    not. Stopped: ``value`` is ``None`` and ``stopped_at`` names a step of
    the trace. Any other combination raises CalibrationError. Build it with
    :meth:`completed` or :meth:`stopped`."""

    status: FlowStatus
    value: FlowValue | None
    trace: tuple[TraceStep, ...]
    stopped_at: str | None = None
    why: str = ""

    def __post_init__(self) -> None:
        try:
            status = FlowStatus(self.status)
        except ValueError:
            raise CalibrationError(
                f"status: 'completed' or 'stopped', got {self.status!r}"
            ) from None
        object.__setattr__(self, "status", status)
        trace = tuple(self.trace)
        for index, step in enumerate(trace):
            if not isinstance(step, TraceStep):
                raise CalibrationError(f"trace[{index}]: a TraceStep, got {type(step).__name__}")
        object.__setattr__(self, "trace", trace)
        if status is FlowStatus.COMPLETED:
            if self.value is None:
                raise CalibrationError("value: a completed flow has a value")
            _check_value(self.value, "value")
            if self.stopped_at is not None:
                raise CalibrationError("stopped_at: a completed flow did not stop")
        else:
            if self.value is not None:
                raise CalibrationError(f"value: a stopped flow has no value, got {self.value!r}")
            if self.stopped_at not in {step.name for step in trace}:
                raise CalibrationError(
                    f"stopped_at: a stopped flow names the step of its trace where it stopped, "
                    f"got {self.stopped_at!r}"
                )

    @classmethod
    def completed(cls, value: FlowValue, trace: Sequence[TraceStep]) -> FlowOutcome:
        return cls(FlowStatus.COMPLETED, value, tuple(trace))

    @classmethod
    def stopped(cls, at: str, trace: Sequence[TraceStep], why: str = "") -> FlowOutcome:
        return cls(FlowStatus.STOPPED, None, tuple(trace), stopped_at=at, why=why)

    def failed_step(self) -> TraceStep | None:
        """The first step of the trace that records a failure, if any."""
        return next((step for step in self.trace if step.error), None)


@dataclass(frozen=True, slots=True)
class FlowMiss:
    """A completed flow whose value differs from what was expected."""

    index: int
    expected: FlowValue
    value: FlowValue
    trace: Annotated[tuple[TraceStep, ...], Field(exclude=True)]


@dataclass(frozen=True, slots=True)
class FlowReport(Accuracy):
    """Scored flow outcomes with their traces, expected values and latencies.

    Only flows with an expected value count (``expected[i] is None`` means
    unlabelled). ``total``: labelled flows; ``stopped``: labelled flows that
    stopped (abstentions); ``answered = total - stopped``; ``correct``:
    completed with the expected value (same type and value). ``accuracy`` is
    ``correct / total`` and ``accuracy_when_answered`` ``correct /
    answered``, each ``None`` when its denominator is 0. ``misses``: labelled
    completed flows with another value; a stop is never a miss.
    """

    outcomes: tuple[FlowOutcome, ...]
    expected: Annotated[tuple[FlowValue | None, ...], Field(exclude=True)]
    latencies_ms: tuple[float, ...]
    total_ms: float
    correct: int
    stopped: int
    total: int
    misses: tuple[FlowMiss, ...]

    def abstentions(self) -> int:
        return self.stopped


def score_flows(
    outcomes: Sequence[FlowOutcome],
    expected: Sequence[FlowValue | None],
    latencies_ms: Sequence[float],
    total_ms: float,
) -> FlowReport:
    """Score existing flow outcomes against expected values (``None``:
    unlabelled). Lengths must match; an outcome that is not a FlowOutcome or
    whose trace records a failed step raises CalibrationError naming it."""
    results = tuple(outcomes)
    wanted = tuple(expected)
    if len(wanted) != len(results):
        raise CalibrationError(f"expected: {len(wanted)} entries for {len(results)} outcomes")
    latencies, total_time = check_timing(latencies_ms, total_ms, len(results), "outcomes")
    correct = stopped = total = 0
    misses: list[FlowMiss] = []
    for index, (outcome, want) in enumerate(zip(results, wanted, strict=True)):
        if not isinstance(outcome, FlowOutcome):
            raise CalibrationError(
                f"outcomes[{index}]: a FlowOutcome, got {type(outcome).__name__}"
            )
        failed = outcome.failed_step()
        if failed is not None:
            raise CalibrationError(
                f"outcomes[{index}]: step {failed.name!r} failed ({failed.error}); "
                "a failed flow aborts and is never scored"
            )
        if want is None:
            continue
        _check_value(want, f"expected[{index}]")
        total += 1
        if outcome.status is FlowStatus.STOPPED:
            stopped += 1
        elif same_decision(outcome.value, want):
            correct += 1
        else:
            misses.append(FlowMiss(index, want, outcome.value, outcome.trace))  # type: ignore[arg-type]
    return FlowReport(
        outcomes=results,
        expected=wanted,
        latencies_ms=latencies,
        total_ms=total_time,
        correct=correct,
        stopped=stopped,
        total=total,
        misses=tuple(misses),
    )


async def run_flow(flows: Sequence[Flow], expected: Sequence[FlowValue | None]) -> FlowReport:
    """Run each flow in turn, timing it, then :func:`score_flows`.

    Lengths and callables are checked before any flow runs. A flow that
    raises, returns something other than a FlowOutcome, or returns a trace
    with a failed step aborts the rest
    with :class:`FlowFailure` (the cause chained); there is no report and no
    retry.
    """
    items = tuple(flows)
    wanted = tuple(expected)
    if len(wanted) != len(items):
        raise CalibrationError(f"expected: {len(wanted)} entries for {len(items)} flows")
    for index, flow in enumerate(items):
        if not callable(flow):
            raise CalibrationError(f"flows[{index}]: a coroutine function, got {flow!r}")
    for index, want in enumerate(wanted):
        if want is not None:
            _check_value(want, f"expected[{index}]")
    outcomes: list[FlowOutcome] = []
    latencies: list[float] = []
    started = time.perf_counter()
    for index, flow in enumerate(items):
        began = time.perf_counter()
        try:
            outcome = await flow()
        except Exception as error:  # any failure aborts the run
            raise FlowFailure(
                f"flow {index} failed: {type(error).__name__}: {error}", flow_index=index
            ) from error
        latencies.append((time.perf_counter() - began) * 1000.0)
        if not isinstance(outcome, FlowOutcome):
            raise FlowFailure(
                f"flow {index} returned {type(outcome).__name__}, not a FlowOutcome",
                flow_index=index,
            )
        failed = outcome.failed_step()
        if failed is not None:
            raise FlowFailure(
                f"flow {index}: step {failed.name!r} failed: {failed.error}", flow_index=index
            )
        outcomes.append(outcome)
    total_ms = (time.perf_counter() - started) * 1000.0
    return score_flows(outcomes, wanted, latencies, total_ms)


def run_flow_sync(flows: Sequence[Flow], expected: Sequence[FlowValue | None]) -> FlowReport:
    """:func:`run_flow` for synchronous code (``asyncio.run``)."""
    return asyncio.run(run_flow(flows, expected))
