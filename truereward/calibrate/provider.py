"""The provider protocol: how a judge is asked.

A provider answers every question about one state in one call::

    class MyJudge:
        async def answer(self, questions, state):
            return {question.name: Answer(...) for question in questions}

It is a coroutine: many calls may be in flight at once (``run`` bounds how
many). It returns exactly one :class:`~truereward.calibrate.Answer` per
question name; an answer with value ``None`` is an abstention. Anything else
(raising, timing out, a missing or extra key, an answer that does not fit its
question) is a failure: :func:`ask` turns it into
:class:`~truereward.calibrate.ProviderFailure`, never into an abstention.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from .answers import Answer, decide_all
from .errors import CalibrationError, ProviderFailure
from .numbers import positive_seconds
from .questions import Question, check_questions

__all__ = ["Provider", "ask", "check_provider"]


@runtime_checkable
class Provider(Protocol):
    """Anything with ``async answer(questions, state) -> {name: Answer}``."""

    async def answer(self, questions: Sequence[Question], state: Any) -> Mapping[str, Answer]:
        """Answer every question about ``state``; raise on failure."""
        ...


def check_provider(provider: object) -> Provider:
    """``provider`` if it has a callable ``answer``, else CalibrationError."""
    if not callable(getattr(provider, "answer", None)):
        raise CalibrationError(
            "provider: an object with async answer(questions, state), "
            f"got {type(provider).__name__}"
        )
    return provider  # type: ignore[return-value]


async def ask(
    provider: Provider,
    questions: Sequence[Question],
    state: Any,
    *,
    timeout_s: float | None = None,
    case_index: int | None = None,
    warmup: bool = False,
) -> dict[str, Answer]:
    """One validated provider call: ``{question name: Answer}`` with exactly
    the question names, each answer fitting its question.

    Raises :class:`ProviderFailure` (the cause chained) when the provider
    raises, exceeds ``timeout_s`` seconds, or returns an invalid response;
    CalibrationError (before calling) for invalid questions or provider. A
    judge reader asks one criterion this way and maps an undecided answer to
    ``JUDGE_ABSTAINED`` and a ProviderFailure to ``PROVIDER_FAILED``.
    """
    asked = check_questions(questions)
    check_provider(provider)
    positive_seconds(timeout_s, "timeout_s")
    where = "warm-up call" if warmup else "call"
    if case_index is not None:
        where += f" for case {case_index}"
    try:
        async with asyncio.timeout(timeout_s):
            response = await provider.answer(asked, state)
    except TimeoutError as error:
        raise ProviderFailure(
            f"{where}: the provider did not answer within {timeout_s} s",
            case_index=case_index,
            warmup=warmup,
        ) from error
    except Exception as error:  # every provider error is a failure, never an abstention
        raise ProviderFailure(
            f"{where}: the provider failed: {type(error).__name__}: {error}",
            case_index=case_index,
            warmup=warmup,
        ) from error
    try:
        decide_all(asked, response)
    except CalibrationError as error:
        raise ProviderFailure(
            f"{where}: invalid response: {error}", case_index=case_index, warmup=warmup
        ) from error
    return dict(response)
