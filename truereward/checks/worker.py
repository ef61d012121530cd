"""Scoring and rendering a chunk of cases: the work a worker process does
(and the caller itself, without workers).

A chunk comes back as the rendered text of its cases and the few numbers the
summary needs, so that little crosses between processes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .casefile import Chunk, cases_in
from .context import ScoringOptions
from .formats import Run, get_format
from .suite import score_raw

__all__ = ["Batch", "Settings", "configure", "score_chunk"]

#: Error and warning lines a batch reports in full (the rest are counted).
KEEP = 20


@dataclass(frozen=True, slots=True)
class Settings:
    """What every chunk of one run shares."""

    format: str
    run: Run
    options: ScoringOptions


class Batch(NamedTuple):
    """A scored chunk: its cases' text (joined by the format's separator)
    and what the summary and the console need, in case order."""

    text: str
    total: int
    passed: int
    internal: int
    #: Of the scored cases (not the errors), in order.
    scores: list[float]
    costs: list[float]
    latencies: list[float]
    #: The first :data:`KEEP` lines ``file:line: case ID: message``.
    errors: list[str]
    warnings: list[str]
    warning_count: int


_settings: Settings | None = None


def configure(settings: Settings) -> None:
    """Set the run's settings in this process (a pool's initializer)."""
    global _settings
    _settings = settings


def score_chunk(chunk: Chunk, settings: Settings | None = None) -> Batch:
    """Score and render the cases of ``chunk`` (with ``settings``, else the
    configured ones)."""
    settings = settings or _settings
    assert settings is not None, "configure() the worker first"
    report = get_format(settings.format)
    run = settings.run
    parts: list[str] = []
    scores: list[float] = []
    costs: list[float] = []
    latencies: list[float] = []
    errors: list[str] = []
    warnings: list[str] = []
    passed = internal = warning_count = 0
    for raw in cases_in(chunk):
        scored = score_raw(raw, settings.options)
        parts.append(report.case(scored, run))
        outcome = scored.outcome
        passed += outcome.passed
        if outcome.score is not None:
            scores.append(outcome.score)
            costs.append(outcome.meta.cost_usd)
            latencies.append(outcome.meta.latency_ms)
        else:
            internal += scored.internal
            if len(errors) < KEEP:
                errors.append(f"{run.file}:{raw.line}: case {outcome.id}: {outcome.error}")
        if outcome.warnings:
            warning_count += len(outcome.warnings)
            for warning in outcome.warnings[: max(KEEP - len(warnings), 0)]:
                warnings.append(f"{run.file}:{raw.line}: case {outcome.id}: {warning}")
    return Batch(
        report.separator.join(parts),
        len(parts),
        passed,
        internal,
        scores,
        costs,
        latencies,
        errors,
        warnings,
        warning_count,
    )
