"""Asking an LLM judge: the machinery the judge reader grades with and
judge calibration measures (one home for both).

- :class:`Question` (boolean, choice, score with zero-based rubric levels;
  region is described but unsupported) and :func:`check_questions`.
- :class:`Answer` and :func:`decide`: an answer reduces to a
  :data:`Decision`, or to ``None``, an abstention.
- The :class:`Provider` protocol and :func:`ask`; :class:`ScriptedProvider`
  (deterministic, for tests); ``OpenAIProvider`` in
  :mod:`truereward.judging.openai` (an OpenAI-compatible HTTP API; needs
  the ``judge`` extra, imported on first use of the name);
  ``LiteLLMProvider`` in :mod:`truereward.judging.litellm` (any provider
  LiteLLM routes to; needs the ``litellm`` extra, imported on the first call).
- :mod:`truereward.judging.samples`: a criterion asked several times,
  combined into one verdict (majority or unanimous; abstentions kept).
- :class:`JudgeError` (bad input, raised before a provider is called) and
  :class:`ProviderFailure` (the judge failed while asked: never an
  abstention).
- :mod:`truereward.judging.codes`: the judge's refusal codes, declared
  through an entry point so every process knows them.

Names are imported on first use, so ``import truereward.judging.codes``
(which every process does to know the codes) loads nothing else.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

if TYPE_CHECKING:
    from .answers import (
        Answer,
        AnswerValue,
        Decision,
        check_answer,
        decide,
        decide_all,
        same_decision,
    )
    from .errors import JudgeError, ProviderFailure, UnsupportedQuestion
    from .litellm import LiteLLMProvider
    from .openai import OpenAIProvider
    from .provider import Provider, ask
    from .questions import Question, QuestionKind, check_questions
    from .testing import ScriptedProvider

__all__ = [
    "Answer",
    "AnswerValue",
    "Decision",
    "JudgeError",
    "LiteLLMProvider",
    "OpenAIProvider",
    "Provider",
    "ProviderFailure",
    "Question",
    "QuestionKind",
    "ScriptedProvider",
    "UnsupportedQuestion",
    "ask",
    "check_answer",
    "check_questions",
    "decide",
    "decide_all",
    "same_decision",
]

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "Answer": "answers",
        "AnswerValue": "answers",
        "Decision": "answers",
        "check_answer": "answers",
        "decide": "answers",
        "decide_all": "answers",
        "same_decision": "answers",
        "JudgeError": "errors",
        "ProviderFailure": "errors",
        "UnsupportedQuestion": "errors",
        "LiteLLMProvider": "litellm",
        "OpenAIProvider": "openai",
        "Provider": "provider",
        "ask": "provider",
        "Question": "questions",
        "QuestionKind": "questions",
        "check_questions": "questions",
        "ScriptedProvider": "testing",
    },
    globals(),
)
