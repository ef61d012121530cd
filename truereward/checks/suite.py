"""From read cases to scored cases and a summary, in order.

:func:`score_raw` scores one :class:`~truereward.checks.casefile.RawCase`
(strict JSON, then :func:`~truereward.checks.case.score_case`); a case that
breaks the scorer itself is reported as an internal error of that case and
the rest are still scored. :class:`SuiteTally` folds outcomes into the
:class:`~truereward.checks.model.Summary` as they stream by, with the same
floats ai-eval-forge's ``sum()`` at the end would give.
:func:`score_cases` scores cases held in memory (the library call).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import PlainSerializer

from ..util.dumped import Dumped
from ..util.strictjson import StrictJSONError, loads
from .case import DEFAULT_OPTIONS, case_id, score_case
from .casefile import RawCase
from .context import ScoringOptions
from .model import CaseOutcome, Summary
from .numbers import RunningSum, round_places

__all__ = [
    "RESOURCE_ERRORS",
    "ScoredCase",
    "SuiteResult",
    "SuiteTally",
    "failure",
    "score_cases",
    "score_raw",
    "score_suite",
]


@dataclass(slots=True)
class ScoredCase:
    """A case's outcome and where it is: ``line`` in the case file (None for
    cases that were never in a file). ``internal`` marks an outcome whose
    error is a bug in truereward, not bad input."""

    outcome: CaseOutcome
    line: int | None = None
    internal: bool = False


def score_raw(raw: RawCase, options: ScoringOptions = DEFAULT_OPTIONS) -> ScoredCase:
    """Parse and score one case as read from a file. Never raises an
    ``Exception``: what goes wrong is an error of this case."""
    if raw.text is None:
        return ScoredCase(_unread(raw.position, raw.problem or "unreadable"), raw.line)
    try:
        value = loads(raw.text)
    except StrictJSONError as error:
        return ScoredCase(_unread(raw.position, str(error)), raw.line)
    except Exception as error:  # noqa: BLE001 - MemoryError, RecursionError: this case's
        return failure(raw.position, raw.line, error)
    return _guarded(value, raw.position, options, raw.line)


#: Exceptions that a case's size or shape can raise in any code: not bugs.
RESOURCE_ERRORS = (MemoryError, RecursionError)


def failure(index: int, line: int | None, error: BaseException, identifier: str = "") -> ScoredCase:
    """The case at ``index`` as an error, for ``error`` raised while it was
    read, scored or rendered: running out of memory or of stack is the
    case's size (an error of the case); anything else is a bug in truereward
    (an internal error of the case). The other cases are scored all the same."""
    if isinstance(error, MemoryError):
        message = "the case needs more memory than this process has (MemoryError); not scored"
    elif isinstance(error, RecursionError):
        message = "the case is nested too deeply to be scored"
    else:
        message = f"internal error (a bug in truereward): {type(error).__name__}: {error}"
    outcome = CaseOutcome(
        id=identifier or f"case-{index}", passed=False, score=None, error=message[:2000]
    )
    return ScoredCase(outcome, line, internal=not isinstance(error, RESOURCE_ERRORS))


def _unread(index: int, problem: str) -> CaseOutcome:
    return CaseOutcome(id=f"case-{index}", passed=False, score=None, error=problem)


def _guarded(value: Any, index: int, options: ScoringOptions, line: int | None) -> ScoredCase:
    try:
        return ScoredCase(score_case(value, index, options), line)
    except Exception as error:  # noqa: BLE001 - report it on this case, score the rest
        identifier = ""
        if isinstance(value, dict):
            with contextlib.suppress(Exception):
                identifier = case_id(value, index)
        return failure(index, line, error, identifier)


def score_cases(
    cases: Iterable[Any], options: ScoringOptions = DEFAULT_OPTIONS
) -> Iterator[ScoredCase]:
    """Score cases held in memory (already-parsed JSON values), in order."""
    for index, case in enumerate(cases):
        yield _guarded(case, index, options, None)


@dataclass(slots=True)
class SuiteResult(Dumped):
    """A whole suite scored in memory: the summary and every outcome; its
    JSON is ai-eval-forge's ``{"summary": ..., "cases": [...]}``."""

    summary: Summary
    cases: Annotated[list[CaseOutcome], PlainSerializer(_cases_json)]


def _cases_json(cases: list[CaseOutcome]) -> list[dict[str, Any]]:
    # Each case's own JSON: it writes an unscored case's error object.
    return [case.to_json() for case in cases]


def score_suite(cases: Iterable[Any], options: ScoringOptions = DEFAULT_OPTIONS) -> SuiteResult:
    """Score a suite held in memory (ai-eval-forge's ``evaluate_suite``). It
    keeps every outcome: for large files, stream with
    :func:`~truereward.checks.run.score_file`."""
    tally = SuiteTally()
    outcomes = []
    for scored in score_cases(cases, options):
        tally.add(scored)
        outcomes.append(scored.outcome)
    return SuiteResult(tally.summary(), outcomes)


class SuiteTally:
    """The summary of the outcomes counted so far (see
    :class:`~truereward.checks.model.Summary` for the rules)."""

    __slots__ = ("_cost", "_latency", "_score", "errors", "internal", "passed", "scored", "total")

    def __init__(self) -> None:
        self.total = 0
        self.passed = 0
        self.errors = 0
        self.internal = 0
        self.scored = 0
        self._score = RunningSum()
        self._cost = RunningSum()
        self._latency = RunningSum()

    def add(self, scored: ScoredCase) -> None:
        """Count one case."""
        outcome = scored.outcome
        self.add_counts(
            total=1,
            passed=int(outcome.passed),
            internal=int(scored.internal),
            scores=() if outcome.score is None else (outcome.score,),
            costs=() if outcome.score is None else (outcome.meta.cost_usd,),
            latencies=() if outcome.score is None else (outcome.meta.latency_ms,),
        )

    def add_counts(
        self,
        *,
        total: int,
        passed: int,
        internal: int,
        scores: Sequence[float],
        costs: Sequence[float],
        latencies: Sequence[float],
    ) -> None:
        """Count consecutive cases at once: how many, how many passed, how
        many hit a bug, and the scores, costs and latencies of those that
        were scored, in order (the others are errors)."""
        self.total += total
        self.passed += passed
        self.internal += internal
        self.errors += total - len(scores)
        self.scored += len(scores)
        self._score.extend(scores)
        self._cost.extend(costs)
        self._latency.extend(latencies)

    def summary(self) -> Summary:
        """The summary so far."""
        scored = self.scored
        return Summary(
            total=self.total,
            passed=self.passed,
            failed=self.total - self.passed,
            pass_rate=self.passed / self.total if self.total else 0.0,
            average_score=self._score.value / scored if scored else 0.0,
            total_cost_usd=round_places(self._cost.value, 6),
            average_latency_ms=round(self._latency.value / scored) if scored else 0,
            errors=self.errors,
        )
