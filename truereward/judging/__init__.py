"""Asking an LLM judge: the machinery the judge reader grades with and
judge calibration measures (one home for both).

Questions and :func:`check_questions`; answers and :func:`decide` (a
decision, or ``None``: an abstention); the :class:`Provider` protocol,
:func:`ask` and the providers (scripted, OpenAI-compatible, LiteLLM, each
imported on first use); :mod:`.samples` for repeated samples; the errors
(:class:`JudgeError`, :class:`ProviderFailure`) and :mod:`.codes`.
docs/calibrate.md describes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..util.lazy import lazy_names

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
