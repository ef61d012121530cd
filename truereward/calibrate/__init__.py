"""Judge calibration: measure an LLM judge against human labels before its
rewards are trusted.

Questions (:class:`Question`: boolean, choice, score with zero-based rubric
levels; region is described but unsupported) are put to a provider about
labelled cases (:class:`Case`). Each :class:`Answer` reduces to a
:data:`Decision` or to ``None``, an abstention (:func:`decide`).

- :func:`score` scores collected answers offline into a :class:`Calibration`
  (per question :class:`QuestionStats`, misses, decisions, latencies).
- :func:`at_min_confidence` re-scores a report with low-confidence answers
  made abstentions, without calling anything.
- :func:`stability` compares repeated reports; :func:`ndcg` scores rankings.
- :func:`run` (a coroutine; :func:`run_sync` for synchronous code) asks a
  provider about every case under a warm-up and a concurrency bound, and
  aborts on any provider failure (:class:`ProviderFailure`), which is never
  an abstention. :func:`run_flow` and :func:`score_flows` do the same for
  multi-step flows with traces.
- Providers: the :class:`Provider` protocol, :class:`ScriptedProvider`
  (deterministic), and ``OpenAIProvider`` (an OpenAI-compatible HTTP API;
  needs the ``judge`` extra, imported on first use of the name).

Questions, answers, providers and their errors are the judge's machinery,
whose home is :mod:`truereward.judging` (the judge reader uses it too); they
are re-exported here, so a calibration needs one import. Bad input raises
:class:`~truereward.judging.JudgeError` (a bad case or log file its
subclass :class:`CalibrationError`).
- The calibration log file: :func:`read_log`, :func:`write_log`.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..judging.answers import (
    Answer,
    AnswerValue,
    Decision,
    check_answer,
    decide,
    decide_all,
    same_decision,
)
from ..judging.errors import JudgeError, ProviderFailure, UnsupportedQuestion
from ..judging.provider import Provider, ask
from ..judging.questions import Question, QuestionKind, check_questions
from ..judging.testing import ScriptedProvider
from .case import Case, check_cases
from .errors import CalibrationError, FlowFailure
from .flows import (
    Flow,
    FlowMiss,
    FlowOutcome,
    FlowReport,
    FlowStatus,
    FlowValue,
    TraceStep,
    run_flow,
    run_flow_sync,
    score_flows,
)
from .logfile import LogFormatError, dump_log, parse_log, read_log, write_log
from .ndcg import ndcg
from .report import Calibration, Miss, QuestionStats, score
from .runner import RunOptions, run, run_sync
from .stability import stability
from .threshold import at_min_confidence

if TYPE_CHECKING:
    from ..judging.openai import OpenAIProvider

__all__ = [
    "Answer",
    "AnswerValue",
    "Calibration",
    "CalibrationError",
    "Case",
    "Decision",
    "Flow",
    "FlowFailure",
    "FlowMiss",
    "FlowOutcome",
    "FlowReport",
    "FlowStatus",
    "FlowValue",
    "JudgeError",
    "LogFormatError",
    "Miss",
    "OpenAIProvider",
    "Provider",
    "ProviderFailure",
    "Question",
    "QuestionKind",
    "QuestionStats",
    "RunOptions",
    "ScriptedProvider",
    "TraceStep",
    "UnsupportedQuestion",
    "ask",
    "at_min_confidence",
    "check_answer",
    "check_cases",
    "check_questions",
    "decide",
    "decide_all",
    "dump_log",
    "ndcg",
    "parse_log",
    "read_log",
    "run",
    "run_flow",
    "run_flow_sync",
    "run_sync",
    "same_decision",
    "score",
    "score_flows",
    "stability",
    "write_log",
]


def __getattr__(name: str) -> Any:
    # httpx is imported only when the HTTP provider is asked for.
    if name == "OpenAIProvider":
        value = import_module("truereward.judging.openai").OpenAIProvider
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
