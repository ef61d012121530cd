"""Criteria checks: score model outputs against cases (``docs/checks.md``).

A case file (JSON array or JSONL) lists cases with an output and checks
(``exact``, ``contains``, ``regex``, ``token_f1``, ``json_valid``,
``json_field``, ``citation_coverage``); each case passes or fails and has a
score in [0, 1]. The formulas are ai-eval-forge 0.2.0's, except for the
improvements listed in ``docs/checks.md`` (Unicode tokens, a time-bounded
regex engine, ``json_field`` that tells missing from null, whole-id
citations, thresholds without float artefacts, per-case errors).

- :func:`score_case`: one case object → :class:`CaseOutcome` (pure).
- :func:`score_suite`: cases in memory → :class:`SuiteResult` (summary and
  outcomes), like ai-eval-forge's ``evaluate_suite``.
- :func:`score_file`: a case file → a report (json, markdown, junit, ctrf),
  streaming, optionally over worker processes.
- :mod:`truereward.checks.compare`: two result files → regressions,
  improvements, score changes, added and removed cases.
- :mod:`truereward.checks.registry`: check types; a new one is one module
  in :mod:`truereward.checks.kinds`.

Needs the ``checks`` extra (the ``regex`` package).
"""

from __future__ import annotations

from .case import score_case
from .context import ScoringOptions
from .model import CaseMeta, CaseOutcome, CheckResult, Measurement, Summary
from .registry import BadCheck, CheckType, check_names, get_check, register
from .run import ScoringRun, score_file
from .suite import Scored, SuiteResult, Tally, score_cases, score_suite

__all__ = [
    "BadCheck",
    "CaseMeta",
    "CaseOutcome",
    "CheckResult",
    "CheckType",
    "Measurement",
    "Scored",
    "ScoringOptions",
    "ScoringRun",
    "SuiteResult",
    "Summary",
    "Tally",
    "check_names",
    "get_check",
    "register",
    "score_case",
    "score_cases",
    "score_file",
    "score_suite",
]
