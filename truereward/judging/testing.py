"""A deterministic provider for tests, examples and dry runs.

:class:`ScriptedProvider` answers from a plain function of the questions and
the state (or from a table keyed by state), so the same inputs always give
the same answers. It counts its calls, remembers the states it was asked
about, tracks how many calls were in flight at once, and can be told to wait
or to fail on a given call, which is how the run's budget, concurrency bound
and abort are tested without a network.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from .answers import Answer
from .questions import Question

__all__ = ["Script", "ScriptedProvider"]

#: The answers for one call: ``script(questions, state) -> {name: Answer}``.
Script = Callable[[Sequence[Question], Any], Mapping[str, Answer]]


class ScriptedProvider:
    """A provider whose answers come from ``script``.

    ``delay_s`` is the time each call takes (a number, or a function of the
    state). ``fail_on_call`` makes the call with that 1-based number raise
    ``failure`` (default: ``RuntimeError``). ``calls`` counts calls started,
    ``states`` lists their states in start order, ``max_in_flight`` is the
    most calls that were running at once.
    """

    def __init__(
        self,
        script: Script,
        *,
        delay_s: float | Callable[[Any], float] = 0.0,
        fail_on_call: int | None = None,
        failure: Exception | None = None,
    ) -> None:
        self.script = script
        self.delay_s = delay_s
        self.fail_on_call = fail_on_call
        self.failure = failure
        self.calls = 0
        self.states: list[Any] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.completed = 0

    @classmethod
    def from_table(
        cls,
        table: Mapping[Hashable, Mapping[str, Answer]],
        *,
        key: Callable[[Any], Hashable] = lambda state: state,
        **options: Any,
    ) -> ScriptedProvider:
        """Answers looked up by ``key(state)`` in ``table`` (a state without an
        entry is a failure: ``KeyError``)."""
        return cls(lambda _questions, state: table[key(state)], **options)

    async def answer(self, questions: Sequence[Question], state: Any) -> Mapping[str, Answer]:
        self.calls += 1
        number = self.calls
        self.states.append(state)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            delay = self.delay_s(state) if callable(self.delay_s) else self.delay_s
            # Always yield once, so that concurrent calls really overlap.
            await asyncio.sleep(delay)
            if self.fail_on_call == number:
                raise self.failure or RuntimeError(f"scripted failure on call {number}")
            answers = self.script(questions, state)
            self.completed += 1
            return answers
        finally:
            self.in_flight -= 1
