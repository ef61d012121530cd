"""Scoring a case file into a report, streaming.

Cases are read (:mod:`~truereward.checks.casefile`), scored in batches, in
this process or in ``jobs`` worker processes (:mod:`~truereward.checks.parallel`),
and their report text is written in file order as soon as each batch is
done. Memory is bounded by the batch size and the number of batches in
flight, not by the number of cases. A format whose head needs the summary
(markdown, JUnit) spools its cases to a temporary file first.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import BinaryIO, TextIO

from .case import DEFAULT_OPTIONS
from .casefile import RawCase, read_cases
from .context import ScoringOptions
from .formats import Run, get_format
from .model import Summary
from .parallel import ordered_map
from .suite import Tally
from .worker import Batch, Settings, configure, score_batch

__all__ = ["BATCH_CASES", "Report", "score_file"]

#: Cases per batch, and the most text one batch holds.
BATCH_CASES = 500
BATCH_CHARS = 1 << 20


@dataclass
class Report:
    """How a scoring run went: the summary, the first ``keep`` error and
    warning lines (``file:line: case ID: message``) and how many there were."""

    summary: Summary
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    warning_count: int = 0
    internal_errors: int = 0


def _batches(raws: Iterator[RawCase]) -> Iterator[list[RawCase]]:
    batch: list[RawCase] = []
    size = 0
    for raw in raws:
        batch.append(raw)
        size += len(raw.text or "")
        if len(batch) >= BATCH_CASES or size >= BATCH_CHARS:
            yield batch
            batch = []
            size = 0
    if batch:
        yield batch


def _scored(raws: Iterator[RawCase], settings: Settings, jobs: int) -> Iterator[Batch]:
    groups = _batches(raws)
    first = next(groups, None)
    if first is None:
        return
    second = next(groups, None) if jobs > 1 else None
    if second is None:
        # One process: either asked for, or the input is one batch (starting
        # workers would cost more than it saves).
        for group in chain([first], groups):
            yield score_batch(group, settings)
        return
    yield from ordered_map(
        score_batch,
        chain([first, second], groups),
        jobs=jobs,
        initializer=configure,
        initargs=(settings,),
    )


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def score_file(
    stream: BinaryIO,
    out: TextIO,
    *,
    file: str,
    format: str = "json",
    jobs: int = 1,
    options: ScoringOptions = DEFAULT_OPTIONS,
    keep: int = 20,
) -> Report:
    """Score the case file ``stream`` (named ``file`` in messages) and write
    the report in ``format`` to ``out``; return how it went."""
    report_format = get_format(format)
    started = _now_ms()
    settings = Settings(format, Run(file, started), options)
    spool = tempfile.TemporaryFile("w+", encoding="utf-8") if report_format.summary_first else None
    try:
        target: TextIO = spool if spool is not None else out
        if spool is None:
            out.write(report_format.head(settings.run, None))
        tally = Tally()
        report = Report(Summary(0, 0, 0, 0.0, 0.0, 0.0, 0))
        wrote = False
        for batch in _scored(read_cases(stream), settings, jobs):
            if wrote:
                target.write(report_format.separator)
            target.write(batch.text)
            wrote = True
            for stats in batch.stats:
                tally.add(
                    stats.passed, stats.score, stats.cost_usd, stats.latency_ms, stats.internal
                )
                if stats.error is not None and len(report.errors) < keep:
                    report.errors.append(stats.error)
                if stats.warnings:
                    report.warning_count += len(stats.warnings)
                    room = keep - len(report.warnings)
                    report.warnings.extend(stats.warnings[: max(room, 0)])
        run = Run(file, started, _now_ms())
        report.summary = tally.summary()
        report.internal_errors = tally.internal
        if spool is not None:
            out.write(report_format.head(run, report.summary))
            spool.seek(0)
            shutil.copyfileobj(spool, out)
        out.write(report_format.tail(run, report.summary))
        return report
    finally:
        if spool is not None:
            spool.close()
