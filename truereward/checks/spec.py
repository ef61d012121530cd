"""Reading a case's ``checks``: what every check shares, and the registry.

Every check takes ``type``, ``required`` and ``min``, read as ai-eval-forge
reads them so that a file means the same here: an absent or empty ``type``
is ``token_f1`` with ``min`` 1 (warned), another unknown name an error; only
``false`` makes a check optional; ``min`` (default 1) is a number, a
numeric string or a boolean (warned when not a number), other values
errors, and outside [0, 1] it is kept with a warning. A case without checks
gets :data:`DEFAULT_CHECK`. docs/checks.md, "Migration from ai-eval-forge".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..util.exceptions import UnknownName
from .context import clock
from .numbers import Ratio, decimal_ratio, lenient_float
from .registry import BadCheck, CheckType, GaveUp, Warn, check_names, get_check

__all__ = ["DEFAULT_CHECK", "BadCheck", "CheckSpec", "parse_checks"]

#: The check a case gets when it names none.
DEFAULT_CHECK: Mapping[str, Any] = {"type": "token_f1", "min": 0.65}


@dataclass(slots=True)
class CheckSpec:
    """One check of one case, validated and ready to run (read-only; not
    frozen because it is built for every check of every case)."""

    kind: CheckType
    required: bool
    min: float
    min_exact: Ratio
    params: Mapping[str, Any]


def _min(check: Mapping[str, Any], warn: Warn) -> float:
    value = lenient_float(check.get("min", 1.0), "min", warn, BadCheck)
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
        said = f"type {name!r} is empty" if "type" in check else "no type"
        warn(f"{said}; token_f1 assumed, with min {check.get('min', 1)!r}")
        name = "token_f1"
    kind = get_check(name) if isinstance(name, str) else None
    if kind is None:
        raise BadCheck(f"unknown check type {name!r} (known: {', '.join(check_names())})")
    flag = check.get("required", True)
    required = flag is not False
    if not isinstance(flag, bool):
        warn(f"required {flag!r} is not a boolean; the check stays required")
    minimum = _min(check, warn)
    params = kind.parse(check, case, warn)
    return CheckSpec(kind, required, minimum, decimal_ratio(minimum), params)


@cache
def _defaults() -> list[CheckSpec]:
    # The default check reads nothing from the case: built once.
    return [parse_check(dict(DEFAULT_CHECK), {}, _refuse_warning)]


def _refuse_warning(message: str) -> None:
    raise AssertionError(f"the default check warns: {message}")


def parse_checks(
    case: Mapping[str, Any], warn: Warn, deadline: float | None = None
) -> list[CheckSpec]:
    """The checks of ``case``, or the default check. Every bad check is
    reported at once: :class:`BadCheck` with one ``checks[i]: ...`` part per
    bad check. The list returned is not to be changed. Reading a check may
    compile a pattern: when ``deadline`` (a :data:`~.context.clock` reading)
    passes with checks still to read, :class:`GaveUp` names the next one."""
    raw = case.get("checks")
    if not raw:
        return _defaults()
    if not isinstance(raw, list):
        raise BadCheck(f"checks: a list of checks, got {type(raw).__name__} {_short(raw)}")
    specs: list[CheckSpec] = []
    problems: list[str] = []
    for position, check in enumerate(raw):
        if position and deadline is not None and clock() >= deadline:
            raise GaveUp(
                f"{_where(position, check)}: gave up: the case's budget ran out while its "
                "checks were read"
            )
        said: list[str] = []
        try:
            specs.append(parse_check(check, case, said.append))
        except (BadCheck, UnknownName) as error:  # a check type that cannot be loaded
            problems.append(f"{_where(position, check)}: {error}")
        for message in said:
            warn(f"{_where(position, check)}: {message}")
    if problems:
        raise BadCheck("; ".join(problems))
    return specs


def _where(position: int, check: Any) -> str:
    name = check.get("type") if isinstance(check, dict) else None
    return (
        f"checks[{position}] ({name})" if isinstance(name, str) and name else f"checks[{position}]"
    )


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
