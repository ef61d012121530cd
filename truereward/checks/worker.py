"""Scoring and rendering a chunk of cases: the work a worker process does
(and the caller itself, without workers).

A chunk comes back as the rendered text of its cases and the few numbers the
summary needs, so that little crosses between processes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..util.strictjson import loads
from .case import case_id
from .casefile import CaseChunk, RawCase, cases_in
from .context import ScoringOptions
from .formats import Format, Run, get_format
from .model import CaseOutcome
from .parallel import WorkerDied, process_context, worker_signals
from .suite import RESOURCE_ERRORS, ScoredCase, failure, score_raw

__all__ = ["Batch", "Settings", "configure", "lost_chunk", "score_alone", "score_chunk"]

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
    #: Cases a check of which gave up (counted in the errors too).
    gave_up: int = 0


_settings: Settings | None = None


def configure(settings: Settings) -> None:
    """Set the run's settings in this process (a pool's initializer)."""
    global _settings
    _settings = settings


def _render(report: Format, raw: RawCase, settings: Settings) -> tuple[ScoredCase, str]:
    """One case scored and rendered; whatever goes wrong (running out of
    memory or stack included) is an error of this case, rendered as such."""
    scored: ScoredCase | None = None
    try:
        scored = score_raw(raw, settings.options)
        return scored, report.case(scored, settings.run)
    except Exception as error:  # noqa: BLE001 - this case's error; the others are scored
        identifier = scored.outcome.id if scored is not None else ""
        scored = None  # what the case held may be what ran out
        failed = failure(raw.position, raw.line, error, identifier)
        return failed, report.case(failed, settings.run)


class _Lines:
    """A batch being built: the cases' text and what the summary needs."""

    def __init__(self, report: Format, run: Run) -> None:
        self.report = report
        self.run = run
        self.parts: list[str] = []
        self.scores: list[float] = []
        self.costs: list[float] = []
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.passed = self.internal = self.warning_count = self.gave_up = 0

    def add(self, scored: ScoredCase, text: str, line: int) -> None:
        self.parts.append(text)
        outcome = scored.outcome
        self.passed += outcome.passed
        if outcome.score is not None:
            self.scores.append(outcome.score)
            self.costs.append(outcome.meta.cost_usd)
            self.latencies.append(outcome.meta.latency_ms)
        else:
            self.internal += scored.internal
            self.gave_up += outcome.gave_up
            if len(self.errors) < KEEP:
                self.errors.append(f"{self.run.file}:{line}: case {outcome.id}: {outcome.error}")
        if outcome.warnings:
            self.warning_count += len(outcome.warnings)
            for warning in outcome.warnings[: max(KEEP - len(self.warnings), 0)]:
                self.warnings.append(f"{self.run.file}:{line}: case {outcome.id}: {warning}")

    def add_lost(self, raw: RawCase, message: str, *, internal: bool = False) -> None:
        """``raw`` as an error, not scored: ``message`` says why."""
        outcome = CaseOutcome(id=_lost_id(raw), passed=False, score=None, error=message[:2000])
        scored = ScoredCase(outcome, raw.line, internal=internal)
        self.add(scored, self.report.case(scored, self.run), raw.line)

    def batch(self) -> Batch:
        return Batch(
            self.report.separator.join(self.parts),
            len(self.parts),
            self.passed,
            self.internal,
            self.scores,
            self.costs,
            self.latencies,
            self.errors,
            self.warnings,
            self.warning_count,
            self.gave_up,
        )


def score_chunk(chunk: CaseChunk, settings: Settings | None = None) -> Batch:
    """Score and render the cases of ``chunk`` (with ``settings``, else the
    configured ones). A case that cannot be scored or rendered, whatever the
    reason, is an error of that case; the others are scored."""
    settings = settings or _settings
    assert settings is not None, "configure() the worker first"
    lines = _Lines(get_format(settings.format), settings.run)
    for raw in cases_in(chunk):
        scored, text = _render(lines.report, raw, settings)
        lines.add(scored, text, raw.line)
    return lines.batch()


#: Case texts up to this size are read again for their id when their chunk
#: was lost (a larger one may be what exhausted the worker).
_ID_TEXT_LIMIT = 1 << 20


def _lost_id(raw: RawCase) -> str:
    if raw.text is None or len(raw.text) > _ID_TEXT_LIMIT:
        return f"case-{raw.position}"
    try:
        value = loads(raw.text)
        return case_id(value, raw.position) if isinstance(value, dict) else f"case-{raw.position}"
    except Exception:  # noqa: BLE001 - an id is a courtesy here
        return f"case-{raw.position}"


def lost_chunk(chunk: CaseChunk, settings: Settings, error: BaseException) -> Batch:
    """``chunk`` as errors, one per case, when scoring it failed as a whole:
    its worker process died (``error`` says how) or raised while the chunk
    was handed back. The report stays whole; the other chunks are scored."""
    raws = list(cases_in(chunk))
    where = f"lines {raws[0].line}-{raws[-1].line}" if len(raws) > 1 else f"line {chunk.first_line}"
    died = isinstance(error, WorkerDied)
    internal = not died and not isinstance(error, RESOURCE_ERRORS)
    if died:
        message = f"not scored: {error} while scoring the cases at {where} of the file"
    elif isinstance(error, RESOURCE_ERRORS):
        message = f"not scored: the cases at {where} ran the worker out of memory or stack"
    else:
        message = (
            f"internal error (a bug in truereward) while scoring the cases at {where}: "
            f"{type(error).__name__}: {error}"
        )
    lines = _Lines(get_format(settings.format), settings.run)
    for raw in raws:
        lines.add_lost(raw, message, internal=internal)
    return lines.batch()


def _score_streaming(sender: Any, raws: list[RawCase], settings: Settings) -> None:
    """The body of a process that scores ``raws`` alone: each case's result
    is handed back as soon as it is scored."""
    worker_signals()
    report = get_format(settings.format)
    try:
        for raw in raws:
            sender.send(_render(report, raw, settings))
    finally:
        sender.close()


def score_alone(
    chunk: CaseChunk, settings: Settings, before_fork: Callable[[], None] | None = None
) -> Batch:
    """``chunk`` scored in a process of its own, after a worker died with it
    in flight. Each case's result comes back as soon as it is scored, so
    when this process dies too, the case it was scoring is known: that case
    is an error saying how the process died, and the cases after it are
    scored in a new process. The cases that did not kill it are scored as
    usual, wherever they were in the chunk."""
    lines = _Lines(get_format(settings.format), settings.run)
    raws = list(cases_in(chunk))
    done = 0
    while done < len(raws):
        if before_fork is not None:
            before_fork()
        context = process_context()
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(
            target=_score_streaming, args=(sender, raws[done:], settings), daemon=True
        )
        process.start()
        sender.close()
        try:
            while done < len(raws):
                try:
                    scored, text = receiver.recv()
                except EOFError:
                    break
                lines.add(scored, text, raws[done].line)
                done += 1
        finally:
            receiver.close()
        process.join()
        if done < len(raws):
            died = WorkerDied(process.exitcode)
            lines.add_lost(raws[done], f"not scored: {died} while scoring this case")
            done += 1
    return lines.batch()
