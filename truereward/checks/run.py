"""Scoring a case file into a report, streaming.

Cases are read in chunks (:mod:`~truereward.checks.casefile`), scored in
this process or in ``jobs`` worker processes (see
:mod:`~truereward.checks.parallel`), and their report text is written in
file order as soon as each chunk is done. Memory is bounded by the chunk
size and the number of chunks in flight, not by the number of cases. A
format whose head needs the summary (markdown, JUnit) spools its cases to a
temporary file first.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from typing import BinaryIO, TextIO

from .case import DEFAULT_OPTIONS
from .casefile import CaseChunk, read_chunks
from .context import ScoringOptions
from .formats import Run, get_format
from .model import Summary
from .parallel import OrderedMap
from .suite import SuiteTally
from .worker import Batch, Settings, configure, lost_chunk, score_alone, score_chunk

__all__ = ["ScoringRun", "score_file"]


@dataclass
class ScoringRun:
    """How a scoring run went: the summary, the first ``keep`` error and
    warning lines (``file:line: case ID: message``) and how many there were."""

    summary: Summary
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    warning_count: int = 0
    internal_errors: int = 0
    #: Cases not scored because a check gave up (counted in the errors).
    gave_up: int = 0


def _here(chunk: CaseChunk, settings: Settings) -> Batch:
    """``chunk`` scored in this process. :func:`score_chunk` makes every
    case's failure that case's error; what could still escape it (running
    out of memory between two cases) makes the chunk's cases errors."""
    try:
        return score_chunk(chunk, settings)
    except Exception as error:  # noqa: BLE001 - those cases' error; the rest is scored
        return lost_chunk(chunk, settings, error)


def _scored(
    chunks: Iterator[CaseChunk], settings: Settings, jobs: int, flush: Callable[[], None]
) -> Iterator[Batch]:
    first = next(chunks, None)
    if first is None:
        return
    second = next(chunks, None) if jobs > 1 else None
    if second is None:
        # One process: either asked for, or the input is one chunk (starting
        # workers would cost more than it saves).
        for chunk in chain([first], chunks):
            yield _here(chunk, settings)
        return
    with OrderedMap(
        score_chunk,
        chain([second], chunks),
        jobs=jobs,
        initializer=configure,
        initargs=(settings,),
        recover=partial(_lost, settings),
        before_fork=flush,
        alone=partial(score_alone, settings=settings, before_fork=flush),
    ) as rest:
        # The first chunk is scored here while the workers start.
        yield _here(first, settings)
        yield from rest


def _lost(settings: Settings, chunk: CaseChunk, error: BaseException) -> Batch:
    return lost_chunk(chunk, settings, error)


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
) -> ScoringRun:
    """Score the case file ``stream`` (named ``file`` in messages) and write
    the report in ``format`` to ``out``; return how it went.

    With ``jobs`` > 1 and more than one chunk of input, chunks are scored in
    worker processes (started with ``forkserver`` or ``spawn``): as with any
    multiprocessing code, a script that calls this must guard its entry
    point with ``if __name__ == "__main__":``."""
    report_format = get_format(format)
    started = _now_ms()
    settings = Settings(format, Run(file, started), options)
    spool = (
        tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - closed in finally
        if report_format.summary_first
        else None
    )
    try:
        target: TextIO = spool if spool is not None else out
        if spool is None:
            out.write(report_format.head(settings.run, None))
        # Nothing may sit in a buffer when workers are forked: a child flushes
        # the standard streams it inherited when it ends.
        out.flush()
        tally = SuiteTally()
        report = ScoringRun(Summary(0, 0, 0, 0.0, 0.0, 0.0, 0))
        wrote = False

        def flush() -> None:
            out.flush()
            target.flush()

        for batch in _scored(read_chunks(stream), settings, jobs, flush):
            if wrote:
                target.write(report_format.separator)
            target.write(batch.text)
            wrote = True
            tally.add_counts(
                total=batch.total,
                passed=batch.passed,
                internal=batch.internal,
                scores=batch.scores,
                costs=batch.costs,
                latencies=batch.latencies,
            )
            report.errors.extend(batch.errors[: max(keep - len(report.errors), 0)])
            report.warnings.extend(batch.warnings[: max(keep - len(report.warnings), 0)])
            report.warning_count += batch.warning_count
            report.gave_up += batch.gave_up
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
