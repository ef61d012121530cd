"""What a check sees of a case: its output, its expected text, the case
itself and the scoring options. Built once per case and shared by its checks,
so the output is parsed as JSON at most once."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["CASE_BUDGET", "NOT_JSON", "REGEX_TIMEOUT", "CaseContext", "ScoringOptions", "clock"]


#: The clock of the time bounds: CPU seconds of this process, the clock the
#: ``regex`` engine counts its timeouts in. A loaded machine takes longer to
#: score a case, but gives up on the same cases.
clock = time.process_time

#: Seconds one ``regex`` search may take (``--regex-timeout``).
REGEX_TIMEOUT = 1.0
#: Seconds the checks of one case may take together (``--case-budget``).
CASE_BUDGET = 5.0


@dataclass(frozen=True, slots=True)
class ScoringOptions:
    """Knobs of the scorer, in seconds of CPU time (:data:`clock`).
    ``regex_timeout`` bounds one ``regex`` search; ``case_budget`` bounds
    the checks of one case together (compiling and searching included). A check that runs out of
    either gives up, and its case is not scored (an error of the case, never
    a failed check): see :class:`~truereward.checks.registry.GaveUp`."""

    regex_timeout: float = REGEX_TIMEOUT
    case_budget: float = CASE_BUDGET

    def __post_init__(self) -> None:
        for name in ("regex_timeout", "case_budget"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"{name}: a number of seconds, got {value!r}")
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name}: a finite number of seconds > 0, got {value!r}")

    def bounds(self) -> str:
        """The bounds in words, for a give-up's message."""
        return f"each search {self.regex_timeout:g} s, the case's checks {self.case_budget:g} s"


class _NotJson:
    """The marker for an output that is not JSON."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_JSON"


NOT_JSON: Any = _NotJson()


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


#: Built once: json.loads with options builds a decoder per call.
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


class CaseContext:
    """The case as its checks see it.

    ``actual`` and ``expected`` are texts (see
    :func:`truereward.checks.text.stringify`); ``case`` is the case object as
    read; ``options`` the scoring options; ``deadline`` the
    :data:`clock` reading by which the case's checks must be done (default:
    ``options.case_budget`` from now)."""

    __slots__ = (
        "_output_error",
        "_output_json",
        "actual",
        "case",
        "deadline",
        "expected",
        "options",
    )

    def __init__(
        self,
        actual: str,
        expected: str,
        case: Mapping[str, Any],
        options: ScoringOptions,
        deadline: float | None = None,
    ) -> None:
        self.actual = actual
        self.expected = expected
        self.case = case
        self.options = options
        self.deadline = clock() + options.case_budget if deadline is None else deadline
        self._output_json: Any = None
        self._output_error: str | None = None

    def remaining(self) -> float:
        """Seconds left of the case's budget (0 or less: it ran out)."""
        return self.deadline - clock()

    def output_json(self) -> Any:
        """The output parsed as JSON (RFC 8259: ``NaN`` and ``Infinity`` are
        not JSON; a repeated key keeps its last value, as in JavaScript), or
        :data:`NOT_JSON`; :meth:`output_json_error` says why. Parsed once."""
        if self._output_json is None and self._output_error is None:
            try:
                self._output_json = _DECODER.decode(self.actual)
                self._output_error = ""
            except json.JSONDecodeError as error:
                self._output_json = NOT_JSON
                self._output_error = (
                    f"not JSON (line {error.lineno} column {error.colno}: {error.msg})"
                )
            except ValueError as error:
                self._output_json = NOT_JSON
                self._output_error = f"not JSON ({error})"
            except RecursionError:
                self._output_json = NOT_JSON
                self._output_error = "not JSON that can be read (nested too deeply)"
        return self._output_json

    def output_json_error(self) -> str:
        """Why the output is not JSON (empty when it is)."""
        self.output_json()
        return self._output_error or ""
