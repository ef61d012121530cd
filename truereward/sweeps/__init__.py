"""Sweep analytics over published grades.

A sweep is a directory or fsspec URL whose subdirectories are runs with
their ``grade.json`` (:class:`SweepSource`). :func:`summarize`,
:func:`compare`, :func:`stability` and :func:`retried_runs` read the grades,
never re-grade, never count a run without a reward as 0, and stream; the
Prefect flow summarises with the same code. :mod:`.markdown` and
:func:`render_report` render them. docs/sweeps.md is the guide; ``truereward
sweep`` the command line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..util.lazy import lazy_names

if TYPE_CHECKING:
    from .comparison import NoReward, RewardChange, SweepComparison, compare, compare_runs
    from .flaky import FlakyCase, RunHistory, Stability, stability
    from .html import render_report
    from .parse import parse_grade
    from .record import RunRecord, RunState
    from .retries import RetriedRun, RetriesListing, RetriesTally, RetryFilter, retried_runs
    from .source import SweepNotFound, SweepSource, grouped_records, paired_records
    from .summary import SummaryBuilder, SweepSummary, summarize

_LAZY = {
    "NoReward": "comparison",
    "RewardChange": "comparison",
    "SweepComparison": "comparison",
    "compare": "comparison",
    "compare_runs": "comparison",
    "parse_grade": "parse",
    "render_report": "html",
    "RetriedRun": "retries",
    "RetriesListing": "retries",
    "RetriesTally": "retries",
    "RetryFilter": "retries",
    "retried_runs": "retries",
    "RunRecord": "record",
    "RunState": "record",
    "SweepNotFound": "source",
    "SweepSource": "source",
    "grouped_records": "source",
    "paired_records": "source",
    "FlakyCase": "flaky",
    "RunHistory": "flaky",
    "Stability": "flaky",
    "stability": "flaky",
    "SummaryBuilder": "summary",
    "SweepSummary": "summary",
    "summarize": "summary",
}

__all__ = [
    "FlakyCase",
    "NoReward",
    "RetriedRun",
    "RetriesListing",
    "RetriesTally",
    "RetryFilter",
    "RewardChange",
    "RunHistory",
    "RunRecord",
    "RunState",
    "Stability",
    "SummaryBuilder",
    "SweepComparison",
    "SweepNotFound",
    "SweepSource",
    "SweepSummary",
    "compare",
    "compare_runs",
    "grouped_records",
    "paired_records",
    "parse_grade",
    "render_report",
    "retried_runs",
    "stability",
    "summarize",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
