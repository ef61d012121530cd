"""The reader of a test report (CTRF, JUnit): one class, given the format's
parser and matching rules."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..record.cases import CaseResult
from ..record.taskspec import TaskSpec
from .evidence import Evidence, Readable
from .matching import EntryIndex, Matcher, trimmed_fallback
from .outcomes import TestOutcome, rows_for

__all__ = ["ParsedReport", "ReportReader"]


@dataclass(frozen=True)
class ParsedReport:
    """A parsed test report: its entries (those a declared case can match,
    when the parse was given the case ids), how many tests it lists and how
    many of them have no name."""

    entries: list[TestOutcome]
    tests: int = 0
    nameless: int = 0


@dataclass(frozen=True)
class ReportReader:
    """Rows from a test report: ``parse(stream, where, case_ids)`` reads the
    report keeping the entries a declared case can match (``Ungradable``
    when it is not one), ``matcher`` gives the format's matching rules over
    an index of them, ``passed_reruns`` whether an earlier entry that looks
    passed can be a rerun (JUnit: pytest-rerunfailures writes a rerun as a
    bare ``<testcase>``)."""

    name: str
    default_evidence: str
    parse: Callable[[Readable, str, Sequence[str] | None], ParsedReport]
    matcher: Callable[[EntryIndex], Matcher]
    passed_reruns: bool = False

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult]:
        where = evidence.describe()
        with evidence.open() as stream:
            report = self.parse(stream, where, [case.id for case in spec.cases])
        return rows_for(
            spec,
            report.entries,
            trimmed_fallback(self.matcher, report.entries),
            source=where,
            passed_reruns=self.passed_reruns,
            unnamed=report.nameless,
        )
