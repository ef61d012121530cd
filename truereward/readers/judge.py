"""The ``judge`` reader: an LLM judge decides a run's criteria.

Each declared case is a criterion (a question and its type: boolean,
rubric, Likert, numeric, choice) put to a judge about the run's evidence;
each sample asks all criteria in one call, and ``samples`` answers are
combined by ``agreement``. An abstention or a disagreement is
``JUDGE_ABSTAINED``, a provider failure refuses the evidence with
``PROVIDER_FAILED`` (both the grader's, retried), never a 0.
docs/calibrate.md, "The judge reader", "Criteria" and "Repeated samples",
gives the options and the rules.
"""

from __future__ import annotations

import asyncio
import importlib
import math
import os
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from ..codes import Ungradable
from ..record.cases import CaseResult, Observation
from ..record.taskspec import CaseSpec, TaskSpec
from ..util.exceptions import TruerewardError
from .evidence import Evidence
from .outcomes import case_invalid

__all__ = ["READER", "JudgeReader"]

T = TypeVar("T")


class _BadCriterion(TruerewardError, ValueError):
    """A criterion's options are not valid."""


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, also when the calling
    thread already runs an event loop (then in a thread of its own)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


#: The most samples a criterion may ask for (each is a provider call).
MAX_SAMPLES = 25
#: The most points a Likert criterion may have.
MAX_POINTS = 11
_OPTIONS = {
    "question",
    "type",
    "levels",
    "pass_at",
    "choices",
    "pass",
    "points",
    "labels",
    "min",
    "max",
}


@dataclass
class _Criterion:
    """A criterion's question, and what its decision means: whether it
    passes, and its score from 0 to 1."""

    question: Any
    passes: Callable[[Any], bool]
    score: Callable[[Any], float]


def _number(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _BadCriterion(f"{what} must be a finite number, got {value!r}")
    return float(value)


def _level(value: object, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _BadCriterion(f"{what} must be a whole number from {low} to {high}, got {value!r}")
    return value


def _criterion(case: CaseSpec) -> _Criterion:
    """The judge's Question of a criterion and its pass and score rules."""
    from ..judging import JudgeError, Question

    options = dict(case.options)
    unknown = set(options) - _OPTIONS
    if unknown:
        raise _BadCriterion(f"unknown option(s) {sorted(unknown)}")
    text = options.get("question", case.id)
    if not isinstance(text, str) or not text.strip():
        raise _BadCriterion("question must be a non-empty string")
    kind = options.get("type", "boolean")
    try:
        if kind in ("boolean", "binary"):
            return _Criterion(
                Question.boolean(case.id, text=text),
                lambda decision: decision is True,
                lambda decision: 1.0 if decision is True else 0.0,
            )
        if kind in ("score", "rubric"):
            levels = options.get("levels")
            if not isinstance(levels, int | list) or isinstance(levels, bool):
                raise _BadCriterion("levels must be a list of names or a count")
            question = Question.score(case.id, levels, text=text)  # type: ignore[arg-type]
            top = len(question.levels) - 1
            pass_at = _level(options.get("pass_at", top), 0, top, "pass_at")
            return _Criterion(question, lambda level: level >= pass_at, lambda level: level / top)
        if kind == "likert":
            points = _level(options.get("points", 5), 2, MAX_POINTS, "points")
            labels = options.get("labels")
            if labels is None:
                named = [str(point) for point in range(1, points + 1)]
            elif isinstance(labels, list) and len(labels) == points:
                named = [f"{point}: {label}" for point, label in enumerate(labels, 1)]
                if not all(isinstance(label, str) and label.strip() for label in labels):
                    raise _BadCriterion("labels must be non-empty strings")
            else:
                raise _BadCriterion(f"labels must be a list of {points} descriptions")
            question = Question.score(case.id, named, text=text)
            lowest = _level(options.get("pass_at", points), 1, points, "pass_at")
            # The judge answers the level's index: point = index + 1.
            return _Criterion(
                question, lambda level: level + 1 >= lowest, lambda level: level / (points - 1)
            )
        if kind == "numeric":
            low, high = _number(options.get("min"), "min"), _number(options.get("max"), "max")
            question = Question.number(case.id, low, high, text=text)
            if "pass_at" not in options:
                raise _BadCriterion("a numeric criterion needs pass_at (passes at values >= it)")
            threshold = _number(options["pass_at"], "pass_at")
            if not low <= threshold <= high:
                raise _BadCriterion(f"pass_at must be from {low!r} to {high!r}")
            return _Criterion(
                question,
                lambda value: value >= threshold,
                lambda value: (value - low) / (high - low),
            )
        if kind == "choice":
            choices = options.get("choices")
            passing = options.get("pass")
            if not isinstance(choices, list):
                raise _BadCriterion("choices must be a list")
            question = Question.choice(case.id, choices, text=text)  # type: ignore[arg-type]
            if not isinstance(passing, list) or not passing or not set(passing) <= set(choices):
                raise _BadCriterion("pass must be a non-empty list of the choices")
            return _Criterion(
                question,
                lambda decision: decision in passing,
                lambda decision: 1.0 if decision in passing else 0.0,
            )
    except JudgeError as error:
        raise _BadCriterion(str(error)) from None
    raise _BadCriterion(
        f"type must be boolean, binary, rubric, score, likert, numeric or choice, got {kind!r}"
    )


def _key(config: Mapping[str, Any]) -> str | None:
    key_env = config.get("api_key_env")
    return os.environ.get(key_env) if isinstance(key_env, str) else None


def _provider(options: Mapping[str, Any]) -> Any:
    config = options.get("provider")
    if not isinstance(config, Mapping):
        raise Ungradable(
            "CASE_INVALID",
            'the judge reader needs a provider option ({"kind": "openai", ...}, '
            '{"kind": "litellm", ...} or {"kind": "python", "factory": ...})',
        )
    kind = config.get("kind")
    if kind == "openai":
        from ..judging.openai import OpenAIProvider

        try:
            return OpenAIProvider(
                str(config.get("base_url", "")),
                str(config.get("model", "")),
                api_key=_key(config),
                timeout_s=float(config.get("timeout_s", 60.0)),
                json_mode=bool(config.get("json_mode", True)),
            )
        except (ValueError, TypeError) as error:
            raise Ungradable("CASE_INVALID", f"provider: {error}") from None
    if kind == "litellm":
        from ..judging.litellm import LiteLLMProvider

        base = config.get("api_base")
        try:
            return LiteLLMProvider(
                str(config.get("model", "")),
                api_base=str(base) if base is not None else None,
                api_key=_key(config),
                timeout_s=float(config.get("timeout_s", 60.0)),
                json_mode=bool(config.get("json_mode", True)),
            )
        except (ValueError, TypeError) as error:
            raise Ungradable("CASE_INVALID", f"provider: {error}") from None
    if kind == "python":
        target = config.get("factory")
        if not isinstance(target, str) or ":" not in target:
            raise Ungradable("CASE_INVALID", "provider.factory: 'package.module:function'")
        module_name, _, attribute = target.partition(":")
        try:
            factory = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError) as error:
            raise Ungradable("CASE_INVALID", f"provider.factory {target}: {error}") from None
        return factory()
    raise Ungradable(
        "CASE_INVALID", f"provider.kind must be openai, litellm or python, got {kind!r}"
    )


def _sampling(options: Mapping[str, Any]) -> tuple[int, str, float]:
    """The reader's ``samples``, ``agreement`` and ``min_confidence``;
    CASE_INVALID naming the option."""
    from ..judging.samples import AGREEMENTS

    samples = options.get("samples", 1)
    if isinstance(samples, bool) or not isinstance(samples, int) or not 1 <= samples <= MAX_SAMPLES:
        raise Ungradable("CASE_INVALID", f"samples must be a whole number from 1 to {MAX_SAMPLES}")
    agreement = options.get("agreement", "majority")
    if agreement not in AGREEMENTS:
        raise Ungradable("CASE_INVALID", f"agreement must be one of {', '.join(AGREEMENTS)}")
    min_confidence = options.get("min_confidence", 0.0)
    if (
        isinstance(min_confidence, bool)
        or not isinstance(min_confidence, int | float)
        or not 0 <= min_confidence <= 1
    ):
        raise Ungradable("CASE_INVALID", "min_confidence must be a number in [0, 1]")
    return samples, str(agreement), float(min_confidence)


async def _ask_all(
    provider: Any, questions: list[Any], state: str, timeout: Any, samples: int
) -> list[dict[str, Any]]:
    """``samples`` calls at once, each validated by :func:`ask`; the first
    ProviderFailure cancels the others and is raised."""
    from ..judging import ProviderFailure, ask

    try:
        async with asyncio.TaskGroup() as group:
            tasks = [
                group.create_task(ask(provider, questions, state, timeout_s=timeout))
                for _ in range(samples)
            ]
    except BaseExceptionGroup as failed:
        first = failed.exceptions[0]
        if isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        if isinstance(first, ProviderFailure | Exception):
            raise first from None
        raise
    return [task.result() for task in tasks]


class JudgeReader:
    """An LLM judge deciding a run's criteria."""

    name = "judge"
    default_evidence = "logs/agent/answer.txt"

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult]:
        from ..judging import ProviderFailure
        from ..judging.codes import PROVIDER_FAILED

        state = evidence.read_text()
        rows: dict[str, CaseResult] = {}
        asked: list[tuple[CaseSpec, _Criterion]] = []
        for case in spec.cases:
            try:
                asked.append((case, _criterion(case)))
            except _BadCriterion as error:
                rows[case.id] = case_invalid(case, f"options: {error}")
        samples, agreement, min_confidence = _sampling(options)
        timeout = options.get("timeout_s")
        if asked:
            provider = _provider(options)
            try:
                answered = _run(
                    _ask_all(
                        provider,
                        [criterion.question for _, criterion in asked],
                        state,
                        timeout,
                        samples,
                    )
                )
            except ProviderFailure as error:
                raise Ungradable(
                    PROVIDER_FAILED,
                    f"the judge could not be asked about {evidence.describe()}: {error}",
                ) from None
            finally:
                close = getattr(provider, "aclose", None)
                if callable(close):
                    _run(close())
            for case, criterion in asked:
                rows[case.id] = _row(
                    case,
                    criterion,
                    [answers[case.id] for answers in answered],
                    agreement,
                    min_confidence,
                )
        return [rows[case.id] for case in spec.cases]


def _row(
    case: CaseSpec,
    criterion: _Criterion,
    answers: list[Any],
    agreement: str,
    min_confidence: float,
) -> CaseResult:
    """A criterion's row from its samples' answers (in call order)."""
    from ..judging import decide
    from ..judging.codes import JUDGE_ABSTAINED
    from ..judging.samples import Sample, combine

    taken: list[Sample] = []
    seen: list[Observation] = []
    for index, answer in enumerate(answers, 1):
        if answer.confidence < min_confidence:
            answer = answer.undecide()
        decision = decide(criterion.question, answer)
        decided = decision is not None
        taken.append(
            Sample(
                decision,
                bool(criterion.passes(decision)) if decided else False,
                float(criterion.score(decision)) if decided else 0.0,
                answer.confidence,
            )
        )
        seen.append(
            Observation(
                name="judge" if len(answers) == 1 else f"judge sample {index}",
                verdict=str(answer.value),
                why=f"confidence {answer.confidence:g}",
            )
        )
    combined = combine(taken, agreement)
    if combined.verdict == "abstained":
        return CaseResult(
            id=case.id,
            kind=case.kind,
            verdict="ungradable",
            code=JUDGE_ABSTAINED,
            why=f"the judge left {case.id} undecided ({combined.why}; confidence "
            f"{combined.confidence:g})",
            observations=seen,
        )
    measures = {"confidence": combined.confidence}
    if combined.score is not None:
        measures["score"] = combined.score
    if len(answers) > 1:
        measures["agreement"] = combined.agreement
    why = ""
    if combined.verdict == "fail":
        decisions = [sample.decision for sample in taken]
        why = (
            f"the judge decided {decisions[0]!r}"
            if len(decisions) == 1
            else f"{combined.why}: the judge decided {decisions!r}"
        )
    elif combined.why:
        why = combined.why
    return CaseResult(
        id=case.id,
        kind=case.kind,
        verdict=combined.verdict,
        why=why,
        observations=seen,
        measures=measures,
    )


READER = JudgeReader()
