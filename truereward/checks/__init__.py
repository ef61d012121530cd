"""Criteria checks: score model outputs against cases.

A case file lists cases with an output and checks (``exact``, ``contains``,
``regex``, ``token_f1``, ``json_valid``, ``json_field``,
``citation_coverage``); each case passes or fails with a score in [0, 1],
by ai-eval-forge 0.2.0's formulas except the improvements docs/checks.md
lists. :func:`score_case` (one case, pure), :func:`score_suite` (in memory),
:func:`score_file` (a file to a report, streaming), :mod:`.compare`,
:mod:`.registry`. Needs the ``checks`` extra. docs/checks.md is the guide.
"""

from __future__ import annotations

from ..util.lazy import lazy_names
from .case import score_case
from .context import ScoringOptions
from .model import CaseMeta, CaseOutcome, CheckResult, Measurement, Summary
from .registry import BadCheck, CheckType, check_names, get_check, register
from .run import ScoringRun, score_file
from .suite import ScoredCase, SuiteResult, SuiteTally, score_cases, score_suite

__all__ = [
    "BadCheck",
    "CaseMeta",
    "CaseOutcome",
    "CheckResult",
    "CheckType",
    "Measurement",
    "ScoredCase",
    "ScoringOptions",
    "ScoringRun",
    "SuiteResult",
    "SuiteTally",
    "Summary",
    "check_names",
    "get_check",
    "register",
    "score_case",
    "score_cases",
    "score_file",
    "score_suite",
]

# Renamed so that each name means one thing across the package (readers.Scored,
# folding.Tally are other things).
__getattr__ = lazy_names(__name__, {}, globals(), {"Scored": "ScoredCase", "Tally": "SuiteTally"})[
    0
]
