"""Score: a normalised quality in [0, 1], higher is better."""

from __future__ import annotations

import math
from typing import Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import CoreSchema, core_schema

from .verdict import EvaluationVerdict

__all__ = ["Score"]


class Score(float):
    """A float in the closed interval [0, 1]; higher is always better.

    ``Score(x)`` accepts an int or a float and raises ``ValueError`` for NaN,
    infinities and anything outside [0, 1], and ``TypeError`` for a bool or a
    non-number (``True`` is not a score). ``-0.0`` becomes ``0.0``. A score
    is a float, so it compares and computes like one.
    """

    __slots__ = ()

    def __new__(cls, value: float | int) -> Score:
        if isinstance(value, Score):
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"a score is a number in [0, 1], got {type(value).__name__}")
        number = float(value)
        if math.isnan(number):
            raise ValueError("a score must not be NaN")
        if not 0.0 <= number <= 1.0:
            raise ValueError(f"a score is in [0, 1], got {number!r}")
        return super().__new__(cls, number + 0.0)  # -0.0 is 0.0: one zero, one JSON form

    def verdict(self, threshold: Score | float) -> EvaluationVerdict:
        """``pass`` when this score is at least ``threshold`` (``>=``), else
        ``fail``. The threshold is a score too (``ValueError`` outside [0, 1])."""
        return EvaluationVerdict.PASS if self >= Score(threshold) else EvaluationVerdict.FAIL

    def __repr__(self) -> str:
        return f"Score({float(self)!r})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        # Checked in Rust (a strict finite float in [0, 1]), then wrapped.
        return core_schema.no_info_after_validator_function(
            cls,
            core_schema.float_schema(strict=True, allow_inf_nan=False, ge=0.0, le=1.0),
            serialization=core_schema.plain_serializer_function_ser_schema(
                float, when_used="always"
            ),
        )
