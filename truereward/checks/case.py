"""Scoring one case: a pure function from a case object to its outcome.

:func:`score_case` reads a case's fields as ai-eval-forge does (``id``,
``actual``/``output``, ``expected``/``reference``, ``checks``, ``tags``,
``costUsd``, ``latencyMs``, ``meta``...), passes it when its required checks
pass, and scores it by the mean of its checks; what ai-eval-forge crashes on
makes this case an error, reported and not scored. No I/O, no state.
docs/checks.md, "Case files", gives each field's rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..util.exceptions import TruerewardError
from .context import CaseContext, ScoringOptions, clock
from .model import CaseMeta, CaseOutcome, CheckResult
from .numbers import lenient_float, reaches_min, round4
from .registry import BadCheck, GaveUp
from .spec import CheckSpec, parse_checks
from .text import stringify

__all__ = ["DEFAULT_OPTIONS", "case_id", "score_case"]

DEFAULT_OPTIONS = ScoringOptions()


class BadCase(TruerewardError, ValueError):
    """A case field that cannot be read."""


def case_id(case: Mapping[str, Any], index: int, warn: Any = None) -> str:
    """The id of ``case``: its ``id``, else ``case-<index>``."""
    raw = case.get("id")
    if not raw:
        return f"case-{index}"
    if isinstance(raw, str):
        return raw
    text = stringify(raw)
    if warn is not None:
        warn(f"id {raw!r} is not a string; read as {text!r}")
    return text


def _text(case: Mapping[str, Any], name: str, alias: str) -> str:
    return stringify(case[name] if name in case else case.get(alias, ""))


def _number(case: Mapping[str, Any], meta: Mapping[str, Any], name: str, warn: Any) -> float:
    return lenient_float(case[name] if name in case else meta.get(name, 0), name, warn, BadCase)


def _tags(case: Mapping[str, Any], warn: Any) -> tuple[Any, ...]:
    raw = case.get("tags")
    if not raw:
        return ()
    if isinstance(raw, list):
        return tuple(raw)
    if not isinstance(raw, str):
        warn(f"tags {raw!r} is not a list; read as one tag")
    return (raw,)


def _meta(case: Mapping[str, Any], warn: Any) -> CaseMeta:
    meta = case.get("meta") or {}
    if not isinstance(meta, dict):
        raise BadCase(f"meta: an object, got {meta!r}")
    return CaseMeta(
        case.get("input"),
        _tags(case, warn),
        _number(case, meta, "costUsd", warn),
        _number(case, meta, "latencyMs", warn),
    )


def run_checks(specs: list[CheckSpec], context: CaseContext) -> tuple[CheckResult, ...]:
    """Measure every check on one case. A check that gives up, or the case's
    budget running out with checks left, raises :class:`GaveUp` naming the
    check (``checks[i] (type): gave up: ...``): the case is then not scored."""
    results = []
    for position, spec in enumerate(specs):
        if position and context.remaining() <= 0:
            raise GaveUp(
                f"checks[{position}] ({spec.kind.name}): gave up: the case's budget ran out "
                "before this check"
            )
        try:
            measured = spec.kind.measure(spec.params, context)
        except GaveUp as gave_up:
            raise GaveUp(f"checks[{position}] ({spec.kind.name}): gave up: {gave_up}") from None
        passed, reported = reaches_min(measured.value, measured.exact, spec.min_exact)
        results.append(
            CheckResult(
                spec.kind.name,
                spec.required,
                passed,
                reported,
                spec.min,
                measured.detail,
                spec.params,
            )
        )
    return tuple(results)


def verdict(checks: tuple[CheckResult, ...]) -> tuple[bool, float]:
    """``(passed, score)`` of a case from its check results: passed when every
    required check passed (every check, when none is required); score the
    mean of the reported check scores, rounded to four decimals (1 for no
    check, which a case never has: it gets the default check)."""
    if len(checks) == 1:
        # round4 of a reported score is the same score: the mean of one.
        return checks[0].passed, checks[0].score
    required = [check for check in checks if check.required]
    deciding = required or checks
    passed = all(check.passed for check in deciding)
    score = round4(sum(check.score for check in checks) / len(checks)) if checks else 1.0
    return passed, score


def score_case(case: Any, index: int = 0, options: ScoringOptions = DEFAULT_OPTIONS) -> CaseOutcome:
    """Score one case (see the module docstring). ``index`` is the case's
    position in its file (for the default id). Never raises on bad input:
    the outcome then carries the error.

    The checks of a case are bounded in time together by
    ``options.case_budget`` (reading them, which may compile patterns, and
    running them); a check that gives up (a regex search out of its time
    bound, or the budget gone) makes the case an error with
    :attr:`CaseOutcome.gave_up`: it has no score, it is not a failure."""
    deadline = clock() + options.case_budget
    warnings: list[str] = []
    warn = warnings.append
    if not isinstance(case, dict):
        return CaseOutcome(
            id=f"case-{index}",
            passed=False,
            score=None,
            error=f"a case is a JSON object, got {_kind(case)}",
        )
    identifier = case_id(case, index, warn)
    try:
        specs = parse_checks(case, warn, deadline)
        meta = _meta(case, warn)
    except (BadCheck, BadCase) as error:
        return CaseOutcome(
            id=identifier, passed=False, score=None, warnings=tuple(warnings), error=str(error)
        )
    except GaveUp as gave_up:
        return _gave_up(identifier, gave_up, CaseMeta(), warnings, options)
    context = CaseContext(
        _text(case, "actual", "output"),
        _text(case, "expected", "reference"),
        case,
        options,
        deadline,
    )
    try:
        checks = run_checks(specs, context)
    except GaveUp as gave_up:
        return _gave_up(identifier, gave_up, meta, warnings, options)
    passed, score = verdict(checks)
    return CaseOutcome(identifier, passed, score, checks, meta, tuple(warnings))


def _gave_up(
    identifier: str, gave_up: GaveUp, meta: CaseMeta, warnings: list[str], options: ScoringOptions
) -> CaseOutcome:
    message = (
        f"{gave_up}; bounds: {options.regex_timeout:g} s per regex search, "
        f"{options.case_budget:g} s per case; the case is not scored"
    )
    return CaseOutcome(
        identifier, False, None, (), meta, tuple(warnings), error=message, gave_up=True
    )


def _kind(value: Any) -> str:
    names = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")
