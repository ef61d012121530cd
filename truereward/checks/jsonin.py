"""Strict JSON for case lines, fast.

The rules of :mod:`truereward.strictjson` (``NaN`` and ``Infinity`` refused,
a repeated key in one object refused, a number too large for a float
refused), with one decoder built once: ``strictjson.loads`` builds a decoder
per call, which costs more than parsing a short case line.
"""

from __future__ import annotations

import json
from typing import Any

from ..strictjson import StrictJSONError

__all__ = ["loads"]


def _constant(name: str) -> Any:
    raise StrictJSONError(f"{name} is not a JSON number")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    built = dict(pairs)
    if len(built) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJSONError(f"duplicate key {key!r} in one object")
            seen.add(key)
    return built


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise StrictJSONError(f"number {text[:40]} is out of range for a float")
    return value


_DECODER = json.JSONDecoder(object_pairs_hook=_object, parse_constant=_constant, parse_float=_float)


def loads(text: str) -> Any:
    """Parse one strict JSON text (:class:`StrictJSONError` saying where and
    why when it is not)."""
    try:
        return _DECODER.decode(text)
    except StrictJSONError:
        raise
    except json.JSONDecodeError as error:
        raise StrictJSONError(
            f"invalid JSON at line {error.lineno} column {error.colno}: {error.msg}"
        ) from None
    except RecursionError:
        raise StrictJSONError("JSON nested too deeply") from None
