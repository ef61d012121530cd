"""What a check sees of a case: its output, its expected text, the case
itself and the scoring options. Built once per case and shared by its checks,
so the output is parsed as JSON at most once."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["NOT_JSON", "CaseContext", "ScoringOptions"]


@dataclass(frozen=True, slots=True)
class ScoringOptions:
    """Knobs of the scorer. ``regex_timeout`` bounds one ``regex`` search in
    seconds; a search that runs out of time fails its check."""

    regex_timeout: float = 1.0


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
    read; ``options`` the scoring options."""

    __slots__ = ("_output_error", "_output_json", "actual", "case", "expected", "options")

    def __init__(
        self, actual: str, expected: str, case: Mapping[str, Any], options: ScoringOptions
    ) -> None:
        self.actual = actual
        self.expected = expected
        self.case = case
        self.options = options
        self._output_json: Any = None
        self._output_error: str | None = None

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
