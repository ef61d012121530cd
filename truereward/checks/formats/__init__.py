"""Report formats for scored cases: ``json`` (ai-eval-forge's shape),
``markdown``, ``junit`` and ``ctrf``.

A format renders each case on its own (:meth:`Format.case`, a pure function
that may run in a worker process) and wraps the cases in a head and a tail.
A format whose head needs the summary (``summary_first``) has its cases
spooled by the writer until the end; the others stream.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Protocol

from ..model import CaseOutcome, Summary
from ..suite import ScoredCase

__all__ = ["FORMATS", "Format", "Run", "failed_checks", "get_format"]

#: Format names and the modules that define them.
FORMATS = {"json": "json_report", "markdown": "markdown", "junit": "junit", "ctrf": "ctrf"}


@dataclass(frozen=True, slots=True)
class Run:
    """What a report says about the run: the case file's name, and when
    scoring started and stopped (epoch milliseconds; 0 when unknown)."""

    file: str
    started_ms: int = 0
    stopped_ms: int = 0


class Format(Protocol):
    """A report format."""

    name: str
    #: Whether :meth:`head` needs the summary (the cases are then spooled).
    summary_first: bool
    #: Written between two cases.
    separator: str

    def case(self, scored: ScoredCase, run: Run) -> str:
        """One case's text."""
        ...

    def head(self, run: Run, summary: Summary | None) -> str:
        """The text before the cases (``summary`` is given when
        ``summary_first``)."""
        ...

    def tail(self, run: Run, summary: Summary) -> str:
        """The text after the cases."""
        ...


def failed_checks(outcome: CaseOutcome) -> str:
    """The checks ``outcome`` failed, as ``type (score < min)``, comma-separated."""
    return ", ".join(
        f"{check.type} ({check.score} < {check.min})"
        for check in outcome.checks
        if not check.passed
    )


def get_format(name: str) -> Format:
    """The format called ``name`` (``KeyError`` listing the known ones)."""
    try:
        module = FORMATS[name]
    except KeyError:
        raise KeyError(f"unknown format {name!r}; known: {', '.join(FORMATS)}") from None
    found: Format = importlib.import_module(f"{__name__}.{module}").FORMAT
    return found
