"""The provider protocol: how a judge is asked.

A provider answers every question about one state in one call, as a
coroutine (many may be in flight; ``run`` bounds them)::

    class MyJudge:
        async def answer(self, questions, state):
            return {question.name: Answer(...) for question in questions}

It returns one :class:`~truereward.calibrate.Answer` per question (value
``None``: an abstention); anything else is a failure, which :func:`ask`
makes a :class:`~truereward.calibrate.ProviderFailure`, never an abstention."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from .answers import Answer, Decider, decide_prepared
from .errors import JudgeError, ProviderFailure
from .numbers import positive_seconds
from .questions import Question, check_questions

__all__ = ["Prepared", "Provider", "ask", "ask_prepared", "check_provider"]


@runtime_checkable
class Provider(Protocol):
    """Anything with ``async answer(questions, state) -> {name: Answer}``."""

    async def answer(self, questions: Sequence[Question], state: Any) -> Mapping[str, Answer]:
        """Answer every question about ``state``; raise on failure."""
        ...


def check_provider(provider: object) -> Provider:
    """``provider`` if it has a callable ``answer``, else JudgeError."""
    if not callable(getattr(provider, "answer", None)):
        raise JudgeError(
            "provider: an object with async answer(questions, state), "
            f"got {type(provider).__name__}"
        )
    return provider  # type: ignore[return-value]


class Prepared:
    """Questions checked once for many calls: the questions, a
    :class:`~truereward.judging.answers.Decider` for each, and their names."""

    __slots__ = ("asked", "deciders", "names")

    def __init__(self, questions: Sequence[Question]) -> None:
        self.asked = check_questions(questions)
        self.deciders = [Decider(question) for question in self.asked]
        self.names = frozenset(question.name for question in self.asked)


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
    JudgeError (before calling) for invalid questions or provider. A
    judge reader asks one criterion this way and maps an undecided answer to
    ``JUDGE_ABSTAINED`` and a ProviderFailure to ``PROVIDER_FAILED``.
    """
    prepared = Prepared(questions)
    check_provider(provider)
    timeout = positive_seconds(timeout_s, "timeout_s")
    return await ask_prepared(
        provider, prepared, state, timeout_s=timeout, case_index=case_index, warmup=warmup
    )


async def ask_prepared(
    provider: Provider,
    prepared: Prepared,
    state: Any,
    *,
    timeout_s: float | None,
    case_index: int | None,
    warmup: bool,
) -> dict[str, Answer]:
    """:func:`ask` with questions, provider and timeout already checked."""
    where = "warm-up call" if warmup else "call"
    if case_index is not None:
        where += f" for case {case_index}"
    deadline = None
    try:
        if timeout_s is None:
            response = await provider.answer(prepared.asked, state)
        else:
            async with asyncio.timeout(timeout_s) as deadline:
                response = await provider.answer(prepared.asked, state)
    except Exception as error:  # every provider error is a failure, never an abstention
        if deadline is not None and deadline.expired():
            message = f"{where}: the provider did not answer within {timeout_s} s"
        elif isinstance(error, ProviderFailure):  # the provider said what went wrong
            message = f"{where}: {error}"
        else:
            message = f"{where}: the provider failed: {type(error).__name__}: {error}"
        raise ProviderFailure(message, case_index=case_index, warmup=warmup) from error
    try:
        decide_prepared(prepared.deciders, prepared.names, response)
    except JudgeError as error:
        raise ProviderFailure(
            f"{where}: invalid response: {error}", case_index=case_index, warmup=warmup
        ) from error
    return dict(response)
