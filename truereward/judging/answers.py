"""A judge's answer to one question, and the decision it reduces to.

An :class:`Answer` is what a provider returns: a ``value`` (``None`` when the
judge left the question undecided), the judge's ``confidence`` in it, and
optionally the probability it gave each outcome. :func:`decide` reduces it to
a :data:`Decision` (``True``/``False``, an option name, a rubric index) or
``None``: an **abstention**. An abstention is an answer, not a failure; a
provider that fails raises instead (:class:`~truereward.calibrate.ProviderFailure`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Annotated, TypeAlias

from pydantic import Field

from ..util.dumped import Dumped
from ..util.frozen import is_empty
from .errors import JudgeError
from .numbers import finite_float, is_number
from .questions import Question, QuestionKind, check_fields

__all__ = [
    "Answer",
    "AnswerValue",
    "Decider",
    "Decision",
    "check_answer",
    "check_label",
    "check_unit_interval",
    "decide",
    "decide_all",
    "decide_prepared",
    "same_decision",
]

#: One non-abstention label: ``bool`` for a boolean question, the option name
#: (``str``) for a choice, the zero-based rubric index (``int``, never a
#: ``bool``) for a score, the number (``float``) for a number question.
#: ``None`` stands beside it for an abstention.
Decision: TypeAlias = bool | int | float | str

#: What an answer may carry: ``None`` (undecided), ``bool``, an option name,
#: an expected score (a finite real number), or a region (four finite numbers).
AnswerValue: TypeAlias = bool | int | float | str | tuple[float, float, float, float] | None

#: Probabilities are checked to add up to at most 1 within this tolerance
#: (providers round; they never add mass).
PROBABILITY_SLACK = 1e-6


def check_unit_interval(value: object, where: str) -> float:
    """``value`` as a float if it is a finite number from 0 to 1, else
    JudgeError naming ``where``."""
    number = finite_float(value)
    if number is None or not 0.0 <= number <= 1.0:
        raise JudgeError(f"{where}: a finite number from 0 to 1, got {value!r}")
    return number


@dataclass(frozen=True, slots=True)
class Answer(Dumped):
    """A provider's answer to one question.

    ``value`` is ``None`` when the judge left the question undecided (an
    abstention), else ``True``/``False`` (boolean), an option name (choice),
    or the expected score on the zero-based rubric index scale (score: a
    finite number from 0 to the last index; it rounds half up to a level).
    ``confidence`` is a finite number from 0 to 1 (an undecided answer has
    one too; it is kept for inspection). ``probabilities`` maps outcome keys
    (:attr:`Question.outcomes`) to finite numbers from 0 to 1 adding up to at
    most 1; empty means the provider reported none. An outcome missing from a
    non-empty mapping has probability 0. The mapping is copied.
    """

    value: AnswerValue
    confidence: float
    probabilities: Annotated[Mapping[str, float], Field(exclude_if=is_empty)] = field(
        default_factory=dict
    )

    def __post_init__(self) -> None:
        value = self.value
        if value is None or isinstance(value, bool | str):
            pass
        elif isinstance(value, int | float):
            if finite_float(value) is None:
                raise JudgeError(f"value: a finite number, got {value!r}")
        elif isinstance(value, tuple | list) and len(value) == 4:
            corners = [finite_float(item) for item in value]
            if any(corner is None for corner in corners):
                raise JudgeError(f"value: a region is four finite numbers, got {value!r}")
            object.__setattr__(self, "value", tuple(corners))
        else:
            raise JudgeError(
                f"value: None, a boolean, a string, a finite number or a region of four "
                f"numbers, got {value!r}"
            )
        object.__setattr__(self, "confidence", check_unit_interval(self.confidence, "confidence"))
        if not isinstance(self.probabilities, Mapping):
            raise JudgeError(
                f"probabilities: a mapping of outcome to probability, got {self.probabilities!r}"
            )
        probabilities: dict[str, float] = {}
        for key, probability in self.probabilities.items():
            if not isinstance(key, str):
                raise JudgeError(f"probabilities: outcome keys are strings, got {key!r}")
            probabilities[key] = check_unit_interval(probability, f"probabilities.{key}")
        if math.fsum(probabilities.values()) > 1.0 + PROBABILITY_SLACK:
            raise JudgeError(
                f"probabilities: add up to at most 1, got {math.fsum(probabilities.values())!r}"
            )
        object.__setattr__(self, "probabilities", probabilities)

    @property
    def undecided(self) -> bool:
        """True when the judge gave no value (an abstention)."""
        return self.value is None

    def probability_of(self, outcome: str) -> float | None:
        """The probability given to ``outcome``: ``None`` when the answer has
        no probabilities at all, ``0.0`` when it has some but not this one."""
        if not self.probabilities:
            return None
        return self.probabilities.get(outcome, 0.0)

    def undecide(self) -> Answer:
        """The same answer left undecided (confidence and probabilities kept)."""
        if self.value is None:
            return self
        return Answer(None, self.confidence, self.probabilities)

    @classmethod
    def from_json(cls, value: object) -> Answer:
        """An answer from ``{value, confidence, probabilities?}``."""
        if not isinstance(value, Mapping):
            raise JudgeError(f"an answer is an object, got {type(value).__name__}")
        known = {"value", "confidence", "probabilities"}
        check_fields(value, known, "answer", required=("value", "confidence"))
        raw = value["value"]
        if isinstance(raw, list):
            raw = tuple(raw)
        return cls(raw, value["confidence"], value.get("probabilities", {}))


class Decider:
    """:func:`decide` for one question, prepared once: what :func:`score`
    uses for every answer, so that each answer costs a few comparisons.
    Constructing it raises :class:`UnsupportedQuestion` for a region."""

    __slots__ = ("_high", "_kind", "_last", "_low", "_option_set", "_outcome_set", "question")

    def __init__(self, question: Question) -> None:
        question.require_supported()
        self.question = question
        self._kind = question.kind
        self._option_set = frozenset(question.options)
        self._outcome_set = frozenset(question.outcomes)
        self._last = len(question.levels) - 1
        self._low = question.minimum if question.minimum is not None else 0.0
        self._high = question.maximum if question.maximum is not None else 0.0

    def __call__(self, answer: Answer) -> Decision | None:
        """The decision of ``answer``, or ``None`` when it is undecided;
        JudgeError naming the field when it does not fit."""
        if not isinstance(answer, Answer):
            raise JudgeError(f"an Answer, got {type(answer).__name__}")
        probabilities = answer.probabilities
        if probabilities and not self._outcome_set.issuperset(probabilities):
            key = next(key for key in probabilities if key not in self._outcome_set)
            outcomes = list(self.question.outcomes)
            raise JudgeError(f"probabilities.{key}: not an outcome of {outcomes!r}")
        value = answer.value
        if value is None:
            return None
        kind = self._kind
        if kind is QuestionKind.BOOLEAN:
            if value is True or value is False:
                return value
            raise JudgeError(f"value: true or false, got {value!r}")
        if kind is QuestionKind.CHOICE:
            if isinstance(value, str) and value in self._option_set:
                return value
            options = list(self.question.options)
            raise JudgeError(f"value: one of {options!r}, got {value!r}")
        # A numeric Answer value is already known to be finite (Answer checks it).
        if kind is QuestionKind.NUMBER:
            if is_number(value) and self._low <= value <= self._high:
                return float(value)
            raise JudgeError(f"value: a number from {self._low!r} to {self._high!r}, got {value!r}")
        if is_number(value) and 0 <= value <= self._last:
            return math.floor(float(value) + 0.5)
        raise JudgeError(f"value: an expected score from 0 to {self._last}, got {value!r}")

    def label(self, label: object) -> Decision:
        """``label`` if it is a decision this question can take, else
        JudgeError."""
        kind = self._kind
        if kind is QuestionKind.BOOLEAN:
            if label is True or label is False:
                return label
            raise JudgeError(f"a boolean question's label is true or false, got {label!r}")
        if kind is QuestionKind.CHOICE:
            if isinstance(label, str) and label in self._option_set:
                return label
            options = list(self.question.options)
            raise JudgeError(f"a label is one of {options!r}, got {label!r}")
        if kind is QuestionKind.NUMBER:
            number = finite_float(label)
            if number is not None and self._low <= number <= self._high:  # None for a bool
                return number
            raise JudgeError(
                f"a number label is from {self._low!r} to {self._high!r}, got {label!r}"
            )
        if isinstance(label, int) and not isinstance(label, bool) and 0 <= label <= self._last:
            return label
        raise JudgeError(f"a score label is a rubric index from 0 to {self._last}, got {label!r}")

    def outcome(self, label: Decision) -> str:
        """The outcome key of a (checked) label: where its probability is."""
        if self._kind is QuestionKind.BOOLEAN:
            return "true" if label else "false"
        return str(label)


def check_answer(question: Question, answer: Answer) -> None:
    """JudgeError unless ``answer`` fits ``question``: its value is of
    the question's kind (an option of a choice, a score within the rubric)
    and its probabilities name only the question's outcomes. A region
    question raises UnsupportedQuestion whatever the answer."""
    Decider(question)(answer)


def check_label(question: Question, label: object) -> Decision:
    """``label`` if it is a decision ``question`` can take, else
    JudgeError (UnsupportedQuestion for a region question)."""
    return Decider(question).label(label)


def decide(question: Question, answer: Answer) -> Decision | None:
    """Reduce an answer to a decision, or ``None`` (an abstention) when it is
    undecided.

    A score rounds half up to a rubric index with ``floor(x + 0.5)`` in
    floating point: 1.5 gives 2, 2.5 gives 3, and 0.49999999999999994 gives 1
    (``x + 0.5`` is exactly 1.0 in binary floating point). Raises
    :class:`UnsupportedQuestion` for a region question, even when the answer
    is undecided, and JudgeError when the answer does not fit.
    """
    return Decider(question)(answer)


def decide_all(
    questions: Sequence[Question] | Sequence[Decider], answers: Mapping[str, Answer]
) -> dict[str, Decision | None]:
    """Decide every question from one ``{question name: Answer}`` mapping,
    whose keys must be exactly the question names (JudgeError naming
    the missing or extra key, or ``name.field: ...`` for an answer that does
    not fit). Prepared :class:`Decider` objects may stand for the questions."""
    deciders = [item if isinstance(item, Decider) else Decider(item) for item in questions]
    return decide_prepared(deciders, {decider.question.name for decider in deciders}, answers)


def decide_prepared(
    deciders: Sequence[Decider], names: AbstractSet[str], answers: Mapping[str, Answer]
) -> dict[str, Decision | None]:
    """:func:`decide_all` with the deciders and the set of their names made
    once (the bulk path of :func:`~truereward.calibrate.score`)."""
    if not isinstance(answers, Mapping):
        raise JudgeError(f"answers: a mapping of question name to Answer, got {answers!r}")
    if answers.keys() != names:
        ordered = [decider.question.name for decider in deciders]
        missing = [name for name in ordered if name not in answers]
        if missing:
            raise JudgeError(f"{missing[0]}: no answer for this question")
        extra = sorted(str(key) for key in answers if key not in names)
        raise JudgeError(f"{extra[0]}: an answer for a question that was not asked")
    out: dict[str, Decision | None] = {}
    name = ""
    try:
        for decider in deciders:
            name = decider.question.name
            out[name] = decider(answers[name])
    except JudgeError as error:
        raise JudgeError(f"{name}.{error}") from None
    return out


def same_decision(left: Decision | None, right: Decision | None) -> bool:
    """Whether two decisions are identical: same type and value (``True`` is
    not the rubric index ``1``), two abstentions included."""
    return type(left) is type(right) and left == right
