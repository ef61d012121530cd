"""Reading a case's ``checks``: what every check shares, and the registry.

Every check takes ``type``, ``required`` and ``min``, read the way
ai-eval-forge reads them, so that a file it scores means the same here:

- ``type``: a registered check type. Absent or empty (``""``, ``null``):
  ``token_f1``, with a warning, because ``min`` then defaults to 1, not to the
  0.65 of the default check. Any other unknown name is an error.
- ``required``: only ``false`` makes a check optional; any other value, even
  ``0`` or ``"false"``, keeps it required (with a warning when it is not a
  boolean).
- ``min``: default 1. A number, or a string that Python's ``float()`` reads
  (``"0.5"``), or a boolean (1 or 0), each with a warning when it is not a
  number; ``null``, other strings and non-finite values are errors. Outside
  [0, 1] it is kept (above 1 the check can never pass; below 0 it always
  does) with a warning.

A case without checks (absent, ``null``, ``[]``...) gets :data:`DEFAULT_CHECK`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .numbers import Ratio, decimal_ratio
from .registry import BadCheck, CheckType, Warn, check_names, get_check

__all__ = ["DEFAULT_CHECK", "BadCheck", "CheckSpec", "parse_checks"]

#: The check a case gets when it names none.
DEFAULT_CHECK: Mapping[str, Any] = {"type": "token_f1", "min": 0.65}


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """One check of one case, validated and ready to run."""

    kind: CheckType
    required: bool
    min: float
    min_exact: Ratio
    params: Mapping[str, Any]


def _min(check: Mapping[str, Any], warn: Warn) -> float:
    if "min" not in check:
        return 1.0
    raw = check["min"]
    if isinstance(raw, bool):
        warn(f"min {raw!r} is a boolean; read as {float(raw)}")
        value = float(raw)
    elif isinstance(raw, int | float):
        try:
            value = float(raw)
        except OverflowError:
            raise BadCheck(f"min: {raw} is too large") from None
    elif isinstance(raw, str):
        try:
            value = float(raw)
        except ValueError:
            raise BadCheck(f"min: a number, got {raw!r}") from None
        warn(f"min {raw!r} is a string; read as {value!r}")
    else:
        raise BadCheck(f"min: a number, got {raw!r}")
    if not math.isfinite(value):
        raise BadCheck(f"min: a finite number, got {raw!r}")
    if value > 1:
        warn(f"min {value!r} is above 1: the check can never pass")
    elif value < 0:
        warn(f"min {value!r} is below 0: the check always passes")
    return value


def parse_check(check: Any, case: Mapping[str, Any], warn: Warn) -> CheckSpec:
    """One check, validated (:class:`BadCheck` naming the parameter)."""
    if not isinstance(check, dict):
        raise BadCheck(f"a check is an object, got {check!r}")
    name = check.get("type")
    if not name:
        if "type" in check:
            warn(f"type {name!r} is empty; token_f1 assumed, with min {check.get('min', 1)!r}")
        else:
            warn(f"no type; token_f1 assumed, with min {check.get('min', 1)!r}")
        name = "token_f1"
    kind = get_check(name) if isinstance(name, str) else None
    if kind is None:
        raise BadCheck(f"unknown check type {name!r} (known: {', '.join(check_names())})")
    required = check.get("required") is not False
    if "required" in check and not isinstance(check["required"], bool):
        warn(f"required {check['required']!r} is not a boolean; the check stays required")
    minimum = _min(check, warn)
    params = kind.parse(check, case, warn)
    return CheckSpec(kind, required, minimum, decimal_ratio(minimum), params)


def parse_checks(case: Mapping[str, Any], warn: Warn) -> list[CheckSpec]:
    """The checks of ``case``, or the default check. Every bad check is
    reported at once: :class:`BadCheck` with one ``checks[i]: ...`` part per
    bad check."""
    raw = case.get("checks")
    if not raw:
        raw = [DEFAULT_CHECK]
    elif not isinstance(raw, list):
        raise BadCheck(f"checks: a list of checks, got {type(raw).__name__} {_short(raw)}")
    specs: list[CheckSpec] = []
    problems: list[str] = []
    for position, check in enumerate(raw):
        where = f"checks[{position}]"
        if isinstance(check, dict) and isinstance(check.get("type"), str) and check["type"]:
            where += f" ({check['type']})"

        def located(message: str, where: str = where) -> None:
            warn(f"{where}: {message}")

        try:
            specs.append(parse_check(check, case, located))
        except BadCheck as error:
            problems.append(f"{where}: {error}")
    if problems:
        raise BadCheck("; ".join(problems))
    return specs


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
