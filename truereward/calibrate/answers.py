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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from .errors import CalibrationError, UnsupportedQuestion
from .numbers import finite_float
from .questions import Question, QuestionKind

__all__ = [
    "Answer",
    "AnswerValue",
    "Decision",
    "check_answer",
    "check_label",
    "check_unit_interval",
    "decide",
    "decide_all",
    "same_decision",
]

#: One discrete, non-abstention label: ``bool`` for a boolean question, the
#: option name (``str``) for a choice, the zero-based rubric index (``int``,
#: never a ``bool``) for a score. ``None`` stands beside it for an abstention.
Decision: TypeAlias = bool | int | str

#: What an answer may carry: ``None`` (undecided), ``bool``, an option name,
#: an expected score (a finite real number), or a region (four finite numbers).
AnswerValue: TypeAlias = bool | int | float | str | tuple[float, float, float, float] | None

#: Probabilities are checked to add up to at most 1 within this tolerance
#: (providers round; they never add mass).
PROBABILITY_SLACK = 1e-6


def check_unit_interval(value: object, where: str) -> float:
    """``value`` as a float if it is a finite number from 0 to 1, else
    CalibrationError naming ``where``."""
    number = finite_float(value)
    if number is None or not 0.0 <= number <= 1.0:
        raise CalibrationError(f"{where}: a finite number from 0 to 1, got {value!r}")
    return number


@dataclass(frozen=True, slots=True)
class Answer:
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
    probabilities: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        value = self.value
        if value is None or isinstance(value, bool | str):
            pass
        elif isinstance(value, int | float):
            if finite_float(value) is None:
                raise CalibrationError(f"value: a finite number, got {value!r}")
        elif isinstance(value, tuple | list) and len(value) == 4:
            corners = [finite_float(item) for item in value]
            if any(corner is None for corner in corners):
                raise CalibrationError(f"value: a region is four finite numbers, got {value!r}")
            object.__setattr__(self, "value", tuple(corners))
        else:
            raise CalibrationError(
                f"value: None, a boolean, a string, a finite number or a region of four "
                f"numbers, got {value!r}"
            )
        object.__setattr__(self, "confidence", check_unit_interval(self.confidence, "confidence"))
        if not isinstance(self.probabilities, Mapping):
            raise CalibrationError(
                f"probabilities: a mapping of outcome to probability, got {self.probabilities!r}"
            )
        probabilities: dict[str, float] = {}
        for key, probability in self.probabilities.items():
            if not isinstance(key, str):
                raise CalibrationError(f"probabilities: outcome keys are strings, got {key!r}")
            probabilities[key] = check_unit_interval(probability, f"probabilities.{key}")
        if math.fsum(probabilities.values()) > 1.0 + PROBABILITY_SLACK:
            raise CalibrationError(
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

    def to_json(self) -> dict[str, Any]:
        """``{value, confidence, probabilities?}`` (a region value as a list)."""
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        out: dict[str, Any] = {"value": value, "confidence": self.confidence}
        if self.probabilities:
            out["probabilities"] = dict(self.probabilities)
        return out

    @classmethod
    def from_json(cls, value: object) -> Answer:
        """An answer from ``{value, confidence, probabilities?}``."""
        if not isinstance(value, Mapping):
            raise CalibrationError(f"an answer is an object, got {type(value).__name__}")
        unknown = set(value) - {"value", "confidence", "probabilities"}
        if unknown:
            raise CalibrationError(f"{sorted(unknown)[0]}: unknown answer field")
        for key in ("value", "confidence"):
            if key not in value:
                raise CalibrationError(f"{key}: missing")
        raw = value["value"]
        if isinstance(raw, list):
            raw = tuple(raw)
        return cls(raw, value["confidence"], value.get("probabilities", {}))


def check_answer(question: Question, answer: Answer) -> None:
    """CalibrationError unless ``answer`` fits ``question``: its value is of
    the question's kind (an option of a choice, a score within the rubric)
    and its probabilities name only the question's outcomes. A region
    question raises UnsupportedQuestion whatever the answer."""
    question.require_supported()
    if not isinstance(answer, Answer):
        raise CalibrationError(f"an Answer, got {type(answer).__name__}")
    value = answer.value
    if value is not None:
        if question.kind is QuestionKind.BOOLEAN and not isinstance(value, bool):
            raise CalibrationError(f"value: true or false, got {value!r}")
        if question.kind is QuestionKind.CHOICE and value not in question.options:
            raise CalibrationError(f"value: one of {list(question.options)!r}, got {value!r}")
        if question.kind is QuestionKind.SCORE:
            last = len(question.levels) - 1
            number = finite_float(value)
            if number is None or not 0 <= number <= last:
                raise CalibrationError(f"value: an expected score from 0 to {last}, got {value!r}")
    outcomes = question.outcomes
    for key in answer.probabilities:
        if key not in outcomes:
            raise CalibrationError(f"probabilities.{key}: not an outcome of {list(outcomes)!r}")


def check_label(question: Question, label: object) -> Decision:
    """``label`` if it is a decision ``question`` can take, else
    CalibrationError (UnsupportedQuestion for a region question)."""
    question.require_supported()
    if question.kind is QuestionKind.BOOLEAN:
        if isinstance(label, bool):
            return label
        raise CalibrationError(f"a boolean question's label is true or false, got {label!r}")
    if question.kind is QuestionKind.CHOICE:
        if isinstance(label, str) and label in question.options:
            return label
        raise CalibrationError(f"a label is one of {list(question.options)!r}, got {label!r}")
    last = len(question.levels) - 1
    if isinstance(label, int) and not isinstance(label, bool) and 0 <= label <= last:
        return label
    raise CalibrationError(f"a score label is a rubric index from 0 to {last}, got {label!r}")


def decide(question: Question, answer: Answer) -> Decision | None:
    """Reduce an answer to a decision, or ``None`` (an abstention) when it is
    undecided.

    A score rounds half up to a rubric index with ``floor(x + 0.5)`` in
    floating point: 1.5 gives 2, 2.5 gives 3, and 0.49999999999999994 gives 1
    (``x + 0.5`` is exactly 1.0 in binary floating point). Raises
    :class:`UnsupportedQuestion` for a region question, even when the answer
    is undecided, and CalibrationError when the answer does not fit.
    """
    check_answer(question, answer)
    value = answer.value
    if value is None:
        return None
    if question.kind is QuestionKind.SCORE:
        return math.floor(float(value) + 0.5)  # type: ignore[arg-type]  # checked: a real number
    return value  # type: ignore[return-value]  # bool or option name, checked above


def decide_all(
    questions: tuple[Question, ...] | list[Question], answers: Mapping[str, Answer]
) -> dict[str, Decision | None]:
    """Decide every question from one ``{question name: Answer}`` mapping,
    whose keys must be exactly the question names (CalibrationError naming
    the missing or extra key, or ``name: ...`` for an answer that does not
    fit)."""
    if not isinstance(answers, Mapping):
        raise CalibrationError(f"answers: a mapping of question name to Answer, got {answers!r}")
    names = [question.name for question in questions]
    missing = [name for name in names if name not in answers]
    if missing:
        raise CalibrationError(f"{missing[0]}: no answer for this question")
    extra = sorted(str(key) for key in answers if key not in set(names))
    if extra:
        raise CalibrationError(f"{extra[0]}: an answer for a question that was not asked")
    out: dict[str, Decision | None] = {}
    for question in questions:
        try:
            out[question.name] = decide(question, answers[question.name])
        except UnsupportedQuestion:
            raise
        except CalibrationError as error:
            raise CalibrationError(f"{question.name}.{error}") from None
    return out


def same_decision(left: Decision | None, right: Decision | None) -> bool:
    """Whether two decisions are identical: same type and value (``True`` is
    not the rubric index ``1``), two abstentions included."""
    return type(left) is type(right) and left == right
