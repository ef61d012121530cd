"""Scoring and rendering a batch of cases: the work a worker process does
(and the caller itself, without workers).

A batch comes back as the rendered text of its cases and, per case, the few
numbers the summary needs, so that nothing large crosses between processes.
"""

from __future__ import annotations

from dataclasses import dataclass

from .casefile import RawCase
from .context import ScoringOptions
from .formats import Run, get_format
from .suite import score_raw

__all__ = ["Batch", "CaseStats", "Settings", "configure", "score_batch"]


@dataclass(frozen=True, slots=True)
class Settings:
    """What every batch of one run shares."""

    format: str
    run: Run
    options: ScoringOptions


@dataclass(frozen=True, slots=True)
class CaseStats:
    """What the summary and the console need of one case."""

    passed: bool
    score: float | None
    cost_usd: float
    latency_ms: float
    internal: bool
    #: ``file:line: case ID: message`` when the case could not be scored.
    error: str | None
    #: ``file:line: case ID: message`` for each warning.
    warnings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Batch:
    """A scored batch: its cases' text (joined by the format's separator)
    and their stats, in order."""

    text: str
    stats: tuple[CaseStats, ...]


_settings: Settings | None = None


def configure(settings: Settings) -> None:
    """Set the run's settings in this process (a pool's initializer)."""
    global _settings
    _settings = settings


def score_batch(cases: list[RawCase], settings: Settings | None = None) -> Batch:
    """Score and render ``cases`` (with ``settings``, else the configured)."""
    settings = settings or _settings
    assert settings is not None, "configure() the worker first"
    report = get_format(settings.format)
    parts = []
    stats = []
    for raw in cases:
        scored = score_raw(raw, settings.options)
        parts.append(report.case(scored, settings.run))
        outcome = scored.outcome
        where = f"{settings.run.file}:{raw.line}: case {outcome.id}"
        stats.append(
            CaseStats(
                passed=outcome.passed,
                score=outcome.score,
                cost_usd=outcome.meta.cost_usd,
                latency_ms=outcome.meta.latency_ms,
                internal=scored.internal,
                error=f"{where}: {outcome.error}" if outcome.error is not None else None,
                warnings=tuple(f"{where}: {warning}" for warning in outcome.warnings),
            )
        )
    return Batch(report.separator.join(parts), tuple(stats))
