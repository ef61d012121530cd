"""CompositeEvaluator: one score and one verdict from weighted components.

Every component is evaluated (at most ``max_concurrency`` at once, default 4)
and must give a score **and** a decided verdict; a component that gives
neither, or only one, makes the composite raise :class:`EvaluationError`,
and so does a component that raises. Nothing is ever taken as a silent 0.

- **Score**: the weighted mean of the component scores,
  ``sum(w_i * s_i) / sum(w_i)``, exact and rounded once
  (:mod:`truereward.util.means`), so neither tiny nor huge weights lose the
  mean. A weight of 0 means 1.
- **EvaluationVerdict**: every ``required`` component must pass, under every policy.
  Then the pass policy: ``all`` (every component passes), ``any`` (at least
  one passes) or ``at_least`` (at least ``minimum_passed`` pass).
- **EvaluationReport**: metric ``composite`` (in ``namespace``, when given) whose
  parameters record the policy, the minimum, and each component's metric,
  weight and required flag (so composites of different make-up are never
  summarised together); ``details`` are the component reports, in order;
  ``feedback`` says how many passed and which required components failed.

Worked example: components (weight 3, required, pass, 1.0) and (weight 1,
fail, 0.5) score (3 * 1.0 + 1 * 0.5) / 4 = 0.875; the composite passes under
``at_least`` 1 and ``any`` and fails under ``all``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, TypeVar

from ..util.means import weighted_mean
from .errors import EvaluationError
from .evaluator import Evaluator, call_evaluator, check_evaluator
from .metric import COMPOSITE, Metric
from .report import EvaluationReport
from .scheduling import check_limit, run_bounded
from .score import Score
from .verdict import EvaluationVerdict

__all__ = ["Component", "CompositeEvaluator", "PassPolicy", "weighted_mean"]

T = TypeVar("T")


class PassPolicy(StrEnum):
    """How many components must pass (required components always must)."""

    ALL = "all"
    ANY = "any"
    AT_LEAST = "at_least"


@dataclass(frozen=True, slots=True)
class Component(Generic[T]):
    """One evaluator of a composite, with its score ``weight`` (finite,
    >= 0; 0 means 1) and whether it is ``required`` to pass whatever the
    pass policy."""

    evaluator: Evaluator[T]
    weight: float = 1.0
    required: bool = False

    def __post_init__(self) -> None:
        check_evaluator(self.evaluator, "a component's evaluator")
        if isinstance(self.weight, bool) or not isinstance(self.weight, int | float):
            raise TypeError(f"a component weight is a number, got {type(self.weight).__name__}")
        if not math.isfinite(self.weight) or self.weight < 0:
            raise ValueError(f"a component weight is finite and >= 0, got {self.weight!r}")
        if not isinstance(self.required, bool):
            raise TypeError(f"required is a bool, got {type(self.required).__name__}")

    @property
    def effective_weight(self) -> float:
        """The weight used in the mean: 1 when the weight is 0."""
        return float(self.weight) or 1.0


class CompositeEvaluator(Generic[T]):
    """Aggregates components into one score and verdict; see the module
    docstring. ``components`` must not be empty; ``minimum_passed`` is given
    exactly when the policy is ``at_least`` (1 to the number of
    components); ``max_concurrency`` None or 0 selects 4."""

    def __init__(
        self,
        components: Sequence[Component[T]],
        pass_policy: PassPolicy | str = PassPolicy.ALL,
        minimum_passed: int | None = None,
        max_concurrency: int | None = None,
        *,
        namespace: str = "",
    ) -> None:
        self.components: tuple[Component[T], ...] = tuple(components)
        if not self.components:
            raise ValueError("a composite needs at least one component")
        for index, component in enumerate(self.components):
            if not isinstance(component, Component):
                raise TypeError(
                    f"components[{index}] is a Component, got {type(component).__name__}"
                )
        self.pass_policy = PassPolicy(pass_policy)
        if self.pass_policy is PassPolicy.AT_LEAST:
            if isinstance(minimum_passed, bool) or not isinstance(minimum_passed, int):
                raise ValueError("pass policy at_least needs minimum_passed (an int)")
            if not 1 <= minimum_passed <= len(self.components):
                raise ValueError(
                    f"minimum_passed is between 1 and {len(self.components)} "
                    f"(the number of components), got {minimum_passed}"
                )
        elif minimum_passed not in (None, 0):
            raise ValueError(
                f"minimum_passed applies to the at_least policy only, not {self.pass_policy.value}"
            )
        self.minimum_passed = minimum_passed if self.pass_policy is PassPolicy.AT_LEAST else None
        self.max_concurrency = check_limit(max_concurrency)
        Metric(namespace=namespace, name=COMPOSITE)  # validates the namespace now
        self.namespace = namespace

    async def evaluate(self, subject: T) -> EvaluationReport:
        """Evaluate every component and aggregate (``EvaluationError`` when a
        component gives no score or no decided verdict; a component's own
        exception is raised as it is, after the others are cancelled)."""
        reports = await run_bounded(
            [
                functools.partial(call_evaluator, component.evaluator, subject)
                for component in self.components
            ],
            self.max_concurrency,
        )
        return self.aggregate(reports)

    def aggregate(self, reports: Sequence[EvaluationReport]) -> EvaluationReport:
        """The composite report of the components' reports (in component
        order). Pure: :meth:`evaluate` is this after evaluating."""
        if len(reports) != len(self.components):
            raise ValueError(f"expected {len(self.components)} reports, got {len(reports)}")
        for index, report in enumerate(reports):
            if report.score is None or not report.verdict.decided:
                missing = " and ".join(
                    part
                    for part, absent in (
                        ("a score", report.score is None),
                        ("a decided verdict", not report.verdict.decided),
                    )
                    if absent
                )
                raise EvaluationError(
                    f"composite component {index} ({report.metric}) did not give {missing}: "
                    "every component must give both"
                )
        passed = sum(report.verdict is EvaluationVerdict.PASS for report in reports)
        failed_required = [
            str(report.metric)
            for component, report in zip(self.components, reports, strict=True)
            if component.required and report.verdict is not EvaluationVerdict.PASS
        ]
        if self.pass_policy is PassPolicy.ALL:
            policy_holds = passed == len(reports)
        elif self.pass_policy is PassPolicy.ANY:
            policy_holds = passed >= 1
        else:
            assert self.minimum_passed is not None
            policy_holds = passed >= self.minimum_passed
        verdict = (
            EvaluationVerdict.PASS
            if policy_holds and not failed_required
            else EvaluationVerdict.FAIL
        )
        score = weighted_mean(
            [
                (float(report.score), component.effective_weight)
                for component, report in zip(self.components, reports, strict=True)
                if report.score is not None
            ]
        )
        feedback = f"{passed} of {len(reports)} components passed (policy {self._policy_text()})"
        if failed_required:
            feedback += "; required and not passed: " + ", ".join(failed_required)
        return EvaluationReport(
            metric=self._metric(reports),
            verdict=verdict,
            score=Score(score),
            feedback=feedback,
            details=list(reports),
        )

    def _policy_text(self) -> str:
        if self.pass_policy is PassPolicy.AT_LEAST:
            return f"at_least {self.minimum_passed}"
        return self.pass_policy.value

    def _metric(self, reports: Sequence[EvaluationReport]) -> Metric:
        parameters: dict[str, Any] = {
            "pass_policy": self.pass_policy.value,
            "components": [
                {
                    "metric": report.metric.model_dump(mode="json"),
                    "weight": component.effective_weight,
                    "required": component.required,
                }
                for component, report in zip(self.components, reports, strict=True)
            ],
        }
        if self.minimum_passed is not None:
            parameters["minimum_passed"] = self.minimum_passed
        return Metric(namespace=self.namespace, name=COMPOSITE, parameters=parameters)
