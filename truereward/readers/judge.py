"""The ``judge`` reader: an LLM judge decides a run's criteria.

The evidence is what the run produced (its answer, a transcript: a text
file, or any file read as UTF-8). Each declared case is one criterion, a
question put to the judge about that evidence, in its options:

.. code-block:: json

    {"id": "cites-sources", "kind": "fail_to_pass",
     "options": {"question": "Does the answer cite at least one source?"}}
    {"id": "quality", "kind": "fail_to_pass",
     "options": {"question": "How good is it?", "type": "score",
                 "levels": ["poor", "fair", "good"], "pass_at": 2}}
    {"id": "tone", "kind": "pass_to_pass",
     "options": {"type": "choice", "choices": ["calm", "rude"], "pass": ["calm"]}}

- ``type``: ``boolean`` (default; ``true`` passes), ``score`` (``levels``,
  a list or a count; passes at a decided level ``>= pass_at``, default the
  top level) or ``choice`` (``choices``; passes when the decision is one of
  ``pass``);
- ``question``: the text put to the judge (default: the case id).

All criteria are asked in one call. The judge's answers are decided with
:func:`truereward.judging.decide` (a score rounds half up). An undecided
answer, or one below ``min_confidence``, is an abstention: that case is
ungradable with ``JUDGE_ABSTAINED``, never a fail. When the provider fails
(an error, a timeout, an answer that does not fit its question), nothing was
decided: the whole evidence is refused with ``PROVIDER_FAILED``. Both codes
are the grader's and retryable, so the grade-run flow asks again.

Reader options (the task spec's ``options``, or keyword arguments of
:func:`truereward.read`):

- ``provider``: ``{"kind": "openai", "base_url", "model", "api_key_env"?,
  "timeout_s"?, "json_mode"?}`` for an OpenAI-compatible chat-completions
  endpoint (the key is read from the named environment variable, never from
  the spec), or ``{"kind": "python", "factory": "package.module:function"}``
  returning any provider (see :mod:`truereward.judging.provider`);
- ``min_confidence`` (default 0): answers below it are abstentions;
- ``timeout_s``: a bound on the whole call.

Options that are not valid make that case ``CASE_INVALID``; a provider
configuration that is not valid refuses the evidence with ``CASE_INVALID``
(the task is broken, not the run).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import threading
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

from ..cases import CaseResult, Observation
from ..codes import Ungradable
from ..taskspec import CaseSpec, TaskSpec
from .evidence import Evidence
from .outcomes import case_invalid

__all__ = ["READER", "JudgeReader"]

T = TypeVar("T")


class _BadCriterion(ValueError):
    """A criterion's options are not valid."""


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from sync code, also when the calling
    thread already runs an event loop (then in a thread of its own)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coroutine)
        except BaseException as error:  # noqa: BLE001 - carried back to the calling thread
            box["error"] = error

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    result: T = box["value"]
    return result


def _question(case: CaseSpec) -> tuple[Any, Any]:
    """The judge's Question of a criterion and its pass rule."""
    from ..judging import JudgeError, Question

    options = dict(case.options)
    unknown = set(options) - {"question", "type", "levels", "pass_at", "choices", "pass"}
    if unknown:
        raise _BadCriterion(f"unknown option(s) {sorted(unknown)}")
    text = options.get("question", case.id)
    if not isinstance(text, str) or not text.strip():
        raise _BadCriterion("question must be a non-empty string")
    kind = options.get("type", "boolean")
    try:
        if kind == "boolean":
            return Question.boolean(case.id, text=text), lambda decision: decision is True
        if kind == "score":
            levels = options.get("levels")
            if not isinstance(levels, int | list) or isinstance(levels, bool):
                raise _BadCriterion("levels must be a list of names or a count")
            question = Question.score(case.id, levels, text=text)  # type: ignore[arg-type]
            count = levels if isinstance(levels, int) else len(levels)
            pass_at = options.get("pass_at", count - 1)
            if (
                isinstance(pass_at, bool)
                or not isinstance(pass_at, int)
                or not 0 <= pass_at < count
            ):
                raise _BadCriterion(f"pass_at must be a level from 0 to {count - 1}")
            return question, lambda decision: decision >= pass_at
        if kind == "choice":
            choices = options.get("choices")
            passing = options.get("pass")
            if not isinstance(choices, list):
                raise _BadCriterion("choices must be a list")
            question = Question.choice(case.id, choices, text=text)  # type: ignore[arg-type]
            if not isinstance(passing, list) or not passing or not set(passing) <= set(choices):
                raise _BadCriterion("pass must be a non-empty list of the choices")
            return question, lambda decision: decision in passing
    except JudgeError as error:
        raise _BadCriterion(str(error)) from None
    raise _BadCriterion(f"type must be boolean, score or choice, got {kind!r}")


def _provider(options: Mapping[str, Any]) -> Any:
    config = options.get("provider")
    if not isinstance(config, Mapping):
        raise Ungradable(
            "CASE_INVALID",
            "the judge reader needs a provider option "
            '({"kind": "openai", ...} or {"kind": "python", "factory": ...})',
        )
    kind = config.get("kind")
    if kind == "openai":
        from ..judging.openai import OpenAIProvider

        key_env = config.get("api_key_env")
        try:
            return OpenAIProvider(
                str(config.get("base_url", "")),
                str(config.get("model", "")),
                api_key=os.environ.get(key_env) if isinstance(key_env, str) else None,
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
    raise Ungradable("CASE_INVALID", f"provider.kind must be openai or python, got {kind!r}")


class JudgeReader:
    """An LLM judge deciding a run's criteria."""

    name = "judge"
    default_evidence = "logs/agent/answer.txt"

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult]:
        from ..judging import ProviderFailure, ask, decide
        from ..judging.codes import JUDGE_ABSTAINED, PROVIDER_FAILED

        state = evidence.read_text()
        rows: dict[str, CaseResult] = {}
        asked: list[tuple[CaseSpec, Any, Any]] = []
        for case in spec.cases:
            try:
                question, passes = _question(case)
            except _BadCriterion as error:
                rows[case.id] = case_invalid(case, f"options: {error}")
                continue
            asked.append((case, question, passes))
        min_confidence = options.get("min_confidence", 0.0)
        if (
            isinstance(min_confidence, bool)
            or not isinstance(min_confidence, int | float)
            or not 0 <= min_confidence <= 1
        ):
            raise Ungradable("CASE_INVALID", "min_confidence must be a number in [0, 1]")
        timeout = options.get("timeout_s")
        if asked:
            provider = _provider(options)
            try:
                answers = _run(
                    ask(provider, [question for _, question, _ in asked], state, timeout_s=timeout)
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
            for case, question, passes in asked:
                answer = answers[question.name]
                if answer.confidence < min_confidence:
                    answer = answer.undecide()
                decision = decide(question, answer)
                seen = [
                    Observation(
                        name="judge",
                        verdict=str(answer.value),
                        why=f"confidence {answer.confidence:g}",
                    )
                ]
                if decision is None:
                    rows[case.id] = CaseResult(
                        id=case.id,
                        kind=case.kind,
                        verdict="ungradable",
                        code=JUDGE_ABSTAINED,
                        why=f"the judge left {case.id} undecided (confidence "
                        f"{answer.confidence:g})",
                        observations=seen,
                    )
                else:
                    passed = bool(passes(decision))
                    rows[case.id] = CaseResult(
                        id=case.id,
                        kind=case.kind,
                        verdict="pass" if passed else "fail",
                        why="" if passed else f"the judge decided {decision!r}",
                        observations=seen,
                        measures={"confidence": answer.confidence},
                    )
        return [rows[case.id] for case in spec.cases]


READER = JudgeReader()
