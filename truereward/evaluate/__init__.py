"""The evaluation model: metrics, reports, evaluators, experiments, summaries.

The general model under readers, checks and sweeps (``docs/evaluate.md``;
after the ``scope/eval`` seed):

- :class:`Metric` (identity: namespace, name, unit, direction, parameters),
  :class:`Direction`, :class:`Score` (a float in [0, 1]), :class:`EvaluationVerdict`
  (pass, fail, unspecified) and :class:`EvaluationReport` (metric, verdict, score,
  measurement, feedback, metadata, details; at least one outcome).
- :class:`Evaluator` (``evaluate(subject)``, sync or async),
  :class:`EvaluatorFunc`, :class:`CompositeEvaluator` (weighted components,
  :class:`Component`, :class:`PassPolicy`), :class:`SuiteEvaluator`,
  :class:`ProjectionEvaluator`.
- :class:`EvaluationCase`, :class:`Dataset`, :class:`Experiment` (bounded
  concurrency, :class:`ErrorPolicy`), :class:`ExperimentReport`, :class:`ExperimentSummary`,
  :class:`MetricSummary`, :class:`Distribution`, :class:`DistributionDelta`,
  :class:`ExperimentComparison`, :class:`MetricComparison`.

Names load on first use, so importing this package (which
``truereward.record.cases`` does, for :class:`EvaluationReport`) costs nothing until a name is
used. ``docs/evaluate.md`` has the rules and worked examples.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..util.lazy import lazy_names

if TYPE_CHECKING:
    from .comparison import ExperimentComparison, MetricComparison
    from .composite import Component, CompositeEvaluator, PassPolicy
    from .dataset import Dataset, EvaluationCase
    from .distribution import Distribution, DistributionDelta
    from .errors import EvaluationError, NotEvaluated
    from .evaluator import Evaluator, EvaluatorFunc, evaluate_sync
    from .experiment import ErrorPolicy, Experiment, ExperimentReport
    from .metric import Direction, Metric
    from .outcome import CaseStatus, EvaluationOutcome
    from .projection import ProjectionEvaluator
    from .report import EvaluationReport
    from .score import Score
    from .suite import SuiteEvaluator
    from .summary import ExperimentSummary, MetricSummary
    from .verdict import EvaluationVerdict

#: Public name -> module, imported on first access.
_LAZY = {
    "ExperimentComparison": "comparison",
    "MetricComparison": "comparison",
    "Component": "composite",
    "CompositeEvaluator": "composite",
    "PassPolicy": "composite",
    "EvaluationCase": "dataset",
    "Dataset": "dataset",
    "Distribution": "distribution",
    "DistributionDelta": "distribution",
    "EvaluationError": "errors",
    "NotEvaluated": "errors",
    "Evaluator": "evaluator",
    "EvaluatorFunc": "evaluator",
    "evaluate_sync": "evaluator",
    "ErrorPolicy": "experiment",
    "Experiment": "experiment",
    "ExperimentReport": "experiment",
    "Direction": "metric",
    "Metric": "metric",
    "EvaluationOutcome": "outcome",
    "CaseStatus": "outcome",
    "ProjectionEvaluator": "projection",
    "EvaluationReport": "report",
    "Score": "score",
    "SuiteEvaluator": "suite",
    "ExperimentSummary": "summary",
    "MetricSummary": "summary",
    "EvaluationVerdict": "verdict",
}

__all__ = [
    "CaseStatus",
    "Component",
    "CompositeEvaluator",
    "Dataset",
    "Direction",
    "Distribution",
    "DistributionDelta",
    "ErrorPolicy",
    "EvaluationCase",
    "EvaluationError",
    "EvaluationOutcome",
    "EvaluationReport",
    "EvaluationVerdict",
    "Evaluator",
    "EvaluatorFunc",
    "Experiment",
    "ExperimentComparison",
    "ExperimentReport",
    "ExperimentSummary",
    "Metric",
    "MetricComparison",
    "MetricSummary",
    "NotEvaluated",
    "PassPolicy",
    "ProjectionEvaluator",
    "Score",
    "SuiteEvaluator",
    "evaluate_sync",
]

# Renamed so that each name means one thing across the package.
_RENAMED = {
    "Case": "EvaluationCase",
    "CaseOutcome": "EvaluationOutcome",
    "Comparison": "ExperimentComparison",
}
__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals(), _RENAMED)
