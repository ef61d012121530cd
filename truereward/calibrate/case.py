"""A labelled case: the input a judge sees, and the human labels for it.

Labels are given for some questions only: a question without a label on a
case does not count for that case in any statistic (its answer is still
recorded and decided). Labels are checked against their questions before any
provider call (:func:`check_cases`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..judging.answers import Decider, Decision
from ..judging.errors import JudgeError, UnsupportedQuestion
from ..judging.questions import Question, check_name
from .errors import CalibrationError

__all__ = ["LabelledCase", "check_cases"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelledCase:
    """One labelled input. ``state`` is what the provider is given (text, or
    any value the provider understands; a JSON value for the HTTP provider
    and the log file). ``labels`` maps question names to the human decision
    (``True``/``False``, an option name, a rubric index); questions left out
    are unlabelled here. ``id`` is an optional name shown in misses."""

    state: Any = None
    labels: Mapping[str, Decision] = field(default_factory=dict)
    id: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.labels, Mapping):
            raise CalibrationError(
                f"labels: a mapping of question name to label, got {self.labels!r}"
            )
        for name in self.labels:
            check_name(name, "a label's question name")
        object.__setattr__(self, "labels", dict(self.labels))
        if self.id is not None:
            check_name(self.id, "a case id")


def check_cases(
    questions: tuple[Question, ...], cases: Iterable[LabelledCase], deciders: Sequence[Decider] = ()
) -> tuple[LabelledCase, ...]:
    """The cases as a tuple, each label checked against its question:
    CalibrationError naming ``cases[i].labels.NAME`` for a label of an unknown
    question or of the wrong kind (UnsupportedQuestion for a region).
    ``deciders`` may hold the questions' prepared deciders."""
    by_name: dict[str, Question | Decider] = {question.name: question for question in questions}
    by_name.update({decider.question.name: decider for decider in deciders})
    prepared: dict[str, Decider] = {}
    out = tuple(cases)
    for index, case in enumerate(out):
        if not isinstance(case, LabelledCase):
            raise CalibrationError(f"cases[{index}]: a LabelledCase, got {type(case).__name__}")
        for name, label in case.labels.items():
            decider = prepared.get(name)
            if decider is None:
                where = f"cases[{index}].labels.{name}"
                found = by_name.get(name)
                if found is None:
                    raise CalibrationError(f"{where}: no question is named {name!r}")
                try:
                    decider = found if isinstance(found, Decider) else Decider(found)
                except UnsupportedQuestion as error:
                    raise UnsupportedQuestion(f"{where}: {error}") from None
                prepared[name] = decider
            try:
                decider.label(label)
            except JudgeError as error:
                raise CalibrationError(f"cases[{index}].labels.{name}: {error}") from None
    return out
