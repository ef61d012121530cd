"""Questions put to a judge: boolean, choice, score (rubric levels), number, region.

A question has a name (the key of its answers and labels), a kind, its
allowed outcomes (string keys, for answer probabilities: ``"true"`` and
``"false"``, the option names, or the rubric indices ``"0"``, ``"1"``...),
and ``text`` (default the name). A score's value is expected on the index
scale and rounds half up; a number's is any finite value within its range;
a region can be described but never decided, labelled or scored
(:class:`~truereward.calibrate.UnsupportedQuestion`). docs/calibrate.md,
"Questions, answers, decisions".
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated

from pydantic import Field

from ..util.dumped import Dumped
from ..util.frozen import is_absent, is_empty
from .errors import JudgeError, UnsupportedQuestion
from .numbers import finite_float

__all__ = ["Question", "QuestionKind", "check_fields", "check_name", "check_questions"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class QuestionKind(StrEnum):
    """What a question asks for."""

    BOOLEAN = "boolean"
    CHOICE = "choice"
    SCORE = "score"
    #: A number within a range (``minimum`` to ``maximum``).
    NUMBER = "number"
    #: Described only; deciding or scoring it raises UnsupportedQuestion.
    REGION = "region"


def check_name(value: object, what: str = "a question name") -> str:
    """``value`` if it is a usable name: a non-empty string without leading or
    trailing whitespace or control characters; else JudgeError."""
    if not isinstance(value, str) or not value:
        raise JudgeError(f"{what} is a non-empty string, got {value!r}")
    if value.strip() != value or _CONTROL.search(value):
        raise JudgeError(
            f"{what} has no leading or trailing whitespace and no control characters, got {value!r}"
        )
    return value


def check_fields(
    value: Mapping[str, object], known: AbstractSet[str], what: str, required: Sequence[str] = ()
) -> None:
    """JudgeError unless the JSON object ``value`` has only ``known`` fields
    (``NAME: unknown WHAT field``, the first in sorted order) and every
    ``required`` one (``NAME: missing``, the first in ``required`` order)."""
    unknown = sorted(set(value) - known)
    if unknown:
        raise JudgeError(f"{unknown[0]}: unknown {what} field")
    for name in required:
        if name not in value:
            raise JudgeError(f"{name}: missing")


def _distinct_names(values: object, what: str) -> tuple[str, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise JudgeError(f"{what} are a list of strings, got {values!r}")
    items = tuple(values)
    for item in items:
        check_name(item, f"each of the {what}")
    if len(items) < 2:
        raise JudgeError(f"there are at least 2 {what}, got {len(items)}")
    if len(set(items)) != len(items):
        raise JudgeError(f"the {what} are distinct, got {list(items)!r}")
    return items


@dataclass(frozen=True, slots=True)
class Question(Dumped):
    """One question. Build it with :meth:`boolean`, :meth:`choice`,
    :meth:`score`, :meth:`number` or :meth:`region`; direct construction is
    validated the same way. ``options`` is used by choice questions only,
    ``levels`` by score questions only, ``minimum`` and ``maximum`` by number
    questions only."""

    # JSON: only the fields of its kind (the others are empty), text when given.
    name: str
    kind: QuestionKind
    options: Annotated[tuple[str, ...], Field(exclude_if=is_empty)] = ()
    levels: Annotated[tuple[str, ...], Field(exclude_if=is_empty)] = ()
    text: Annotated[str, Field(exclude_if=is_empty)] = ""
    minimum: Annotated[float | None, Field(exclude_if=is_absent)] = None
    maximum: Annotated[float | None, Field(exclude_if=is_absent)] = None

    def __post_init__(self) -> None:
        check_name(self.name)
        try:
            kind = QuestionKind(self.kind)
        except ValueError:
            known = ", ".join(kind.value for kind in QuestionKind)
            raise JudgeError(f"{self.name}: kind is one of {known}, got {self.kind!r}") from None
        object.__setattr__(self, "kind", kind)
        if not isinstance(self.text, str):
            raise JudgeError(f"{self.name}: text is a string, got {self.text!r}")
        try:
            options = (
                _distinct_names(self.options, "options") if kind is QuestionKind.CHOICE else ()
            )
            levels = _distinct_names(self.levels, "levels") if kind is QuestionKind.SCORE else ()
        except JudgeError as error:
            raise JudgeError(f"{self.name}: {error}") from None
        if kind is not QuestionKind.CHOICE and tuple(self.options):
            raise JudgeError(f"{self.name}: only a choice question has options")
        if kind is not QuestionKind.SCORE and tuple(self.levels):
            raise JudgeError(f"{self.name}: only a score question has levels")
        self._check_range(kind)
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "levels", levels)

    @classmethod
    def boolean(cls, name: str, *, text: str = "") -> Question:
        """A yes/no question; decisions are ``True`` or ``False``."""
        return cls(name, QuestionKind.BOOLEAN, text=text)

    @classmethod
    def choice(cls, name: str, options: Sequence[str], *, text: str = "") -> Question:
        """Pick one of at least two distinct option names; the decision is the
        option name."""
        if isinstance(options, str | bytes) or not isinstance(options, Sequence):
            raise JudgeError(f"{name}: options are a list of strings, got {options!r}")
        return cls(name, QuestionKind.CHOICE, options=tuple(options), text=text)

    @classmethod
    def score(cls, name: str, levels: Sequence[str] | int, *, text: str = "") -> Question:
        """Rate on a rubric of at least two levels, described in order;
        decisions are zero-based level indices. An integer ``levels`` gives
        that many levels named by their index."""
        if isinstance(levels, int) and not isinstance(levels, bool):
            return cls(name, QuestionKind.SCORE, levels=tuple(map(str, range(levels))), text=text)
        if isinstance(levels, str | bytes) or not isinstance(levels, Sequence):
            raise JudgeError(f"{name}: levels are a list of level descriptions or a count")
        return cls(name, QuestionKind.SCORE, levels=tuple(levels), text=text)

    @classmethod
    def number(cls, name: str, minimum: float, maximum: float, *, text: str = "") -> Question:
        """A number from ``minimum`` to ``maximum`` (finite, ``minimum < maximum``);
        the decision is the number answered."""
        return cls(name, QuestionKind.NUMBER, text=text, minimum=minimum, maximum=maximum)

    def _check_range(self, kind: QuestionKind) -> None:
        if kind is not QuestionKind.NUMBER:
            if self.minimum is not None or self.maximum is not None:
                raise JudgeError(f"{self.name}: only a number question has a minimum and maximum")
            return
        bounds = []
        for field, value in (("minimum", self.minimum), ("maximum", self.maximum)):
            number = finite_float(value)
            if number is None:
                raise JudgeError(f"{self.name}: {field} is a finite number, got {value!r}")
            bounds.append(number)
        low, high = bounds
        if not low < high or not math.isfinite(high - low):
            raise JudgeError(f"{self.name}: minimum is below maximum, got {low!r} and {high!r}")
        object.__setattr__(self, "minimum", low)
        object.__setattr__(self, "maximum", high)

    @classmethod
    def region(cls, name: str, *, text: str = "") -> Question:
        """An image region: unsupported here (see the module documentation)."""
        return cls(name, QuestionKind.REGION, text=text)

    @property
    def prompt(self) -> str:
        """What the judge is asked: ``text``, or the name when there is none."""
        return self.text or self.name

    @property
    def outcomes(self) -> tuple[str, ...]:
        """The outcome keys answer probabilities may use (none for a region)."""
        if self.kind is QuestionKind.BOOLEAN:
            return ("true", "false")
        if self.kind is QuestionKind.CHOICE:
            return self.options
        if self.kind is QuestionKind.SCORE:
            return tuple(str(index) for index in range(len(self.levels)))
        return ()

    def require_supported(self) -> None:
        """Raise :class:`UnsupportedQuestion` for a region question."""
        if self.kind is QuestionKind.REGION:
            raise UnsupportedQuestion(
                f"{self.name}: region questions cannot be decided, labelled or scored"
            )

    @classmethod
    def from_json(cls, value: object) -> Question:
        """A question from its JSON form; JudgeError naming the field."""
        if not isinstance(value, Mapping):
            raise JudgeError(f"a question is an object, got {type(value).__name__}")
        known = {"name", "kind", "options", "levels", "text", "minimum", "maximum"}
        check_fields(value, known, "question", required=("name", "kind"))
        for field in ("options", "levels"):
            if field in value and not isinstance(value[field], list):
                raise JudgeError(f"{field}: a list of strings, got {value[field]!r}")
        kind = value["kind"]
        if not isinstance(kind, str):
            raise JudgeError(f"kind: a string, got {kind!r}")
        return cls(
            value["name"],
            kind,  # type: ignore[arg-type]  # checked in __post_init__
            options=tuple(value.get("options", ())),
            levels=tuple(value.get("levels", ())),
            text=value.get("text", ""),
            minimum=value.get("minimum"),
            maximum=value.get("maximum"),
        )


def check_questions(
    questions: Iterable[Question], *, allow_region: bool = False
) -> tuple[Question, ...]:
    """The questions as a tuple, checked: each a :class:`Question`, names
    distinct, and (unless ``allow_region``) no region question."""
    if isinstance(questions, Question):
        raise JudgeError("questions: a sequence of Question, got a single Question")
    out = tuple(questions)
    seen: set[str] = set()
    for index, question in enumerate(out):
        if not isinstance(question, Question):
            raise JudgeError(f"questions[{index}]: a Question, got {type(question).__name__}")
        if question.name in seen:
            raise JudgeError(f"questions[{index}]: the name {question.name!r} is used twice")
        seen.add(question.name)
        if not allow_region:
            question.require_supported()
    return out
