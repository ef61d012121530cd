"""Judge calibration: measure an LLM judge against human labels before its
rewards are trusted.

Questions are put to a provider about labelled cases; :func:`score` scores
the answers into a :class:`Calibration`, :func:`run` asks a provider (a
provider failure aborts, never an abstention), and :func:`stability`,
:func:`ndcg`, :func:`at_min_confidence` and the log file functions work on
the results. The judge's machinery (questions, answers, providers) lives in
:mod:`truereward.judging` and is re-exported here. docs/calibrate.md is the
guide.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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
from ..util.lazy import lazy_names
from .case import LabelledCase, check_cases
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
    "Decision",
    "Flow",
    "FlowFailure",
    "FlowMiss",
    "FlowOutcome",
    "FlowReport",
    "FlowStatus",
    "FlowValue",
    "JudgeError",
    "LabelledCase",
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


# httpx is imported only when the HTTP provider is asked for; the old name
# of LabelledCase still works, with a warning.
__getattr__ = lazy_names(
    __name__,
    # lazy_names prefixes a dot: this names truereward.judging.openai
    {"OpenAIProvider": (".judging.openai", "OpenAIProvider")},
    globals(),
    {"Case": "LabelledCase"},
)[0]
