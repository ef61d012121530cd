"""Sweep analytics over published grades (``docs/sweeps.md``).

A sweep is a directory or fsspec URL whose subdirectories are runs, each
with its published ``grade.json`` (:class:`SweepSource`). Analyses read the
grades, never re-grade, and never count a run without a reward as 0:

- :func:`summarize`: reward distribution over gradable runs only, refusals
  by code and blame, attempts (:class:`SweepSummary`);
- :func:`compare` / :func:`compare_runs`: two sweeps, runs paired by id:
  regressions, fixes, newly ungradable, newly gradable, reward deltas absent
  when a side has none (:class:`SweepComparison`);
- :func:`stability`: repeated sweeps of the same runs: flaky runs, runs that
  flip gradability, flaky cases (:class:`Stability`);
- :func:`retried_runs` / :class:`RetriesListing`: the retried and
  grader-refused runs attempt by attempt (:class:`RetriedRun`,
  :class:`RetriesTally`).

The analyses are pure functions over records (:class:`RunRecord`, or grade
documents for :func:`summarize`) and stream: the Prefect flow summarises
the documents it holds with the same code. :mod:`truereward.sweeps.markdown`
renders them as markdown; :func:`render_report` (:mod:`truereward.sweeps.html`)
as one self-contained HTML page. ``docs/sweeps.md`` has the details; ``truereward sweep`` is
the command line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

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
