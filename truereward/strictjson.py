"""Strict JSON in and canonical JSON out.

Everything truereward reads or writes is strict JSON (RFC 8259): Python's
``json`` module accepts ``NaN``, ``Infinity`` and duplicate object keys, and a
document that carries them means different things to different readers, so
both are refused here. Output is canonical: sorted keys, UTF-8, no NaN, so the
same value always gives the same bytes (and the same sha256).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["StrictJSONError", "canonical_bytes", "loads"]


class StrictJSONError(ValueError):
    """The text is not strict JSON. The message says where and why."""


def _refuse_constant(name: str) -> Any:
    raise StrictJSONError(f"{name} is not a JSON number")


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    built = dict(pairs)  # in C; the pairs are walked only when a key repeats
    if len(built) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJSONError(f"duplicate key {key!r} in one object")
            seen.add(key)
    return built


def loads(text: str | bytes) -> Any:
    """Parse strict JSON.

    Raises :class:`StrictJSONError` on invalid JSON (with line and column),
    on ``NaN``/``Infinity``/``-Infinity``, on numbers too large for a float
    (they would become ``inf``), on integers longer than Python converts
    (``sys.get_int_max_str_digits()``, 4300 digits by default), on
    duplicate keys in one object and on bytes that are not UTF-8. A leading
    UTF-8 byte-order mark is accepted.
    """
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise StrictJSONError(f"not UTF-8 text: {error}") from None
    elif text.startswith("\ufeff"):
        text = text[1:]
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
    except ValueError as error:  # an integer past Python's digit limit
        raise StrictJSONError(f"a number too long to read: {error}") from None


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise StrictJSONError(f"number {text[:40]} is out of range for a float")
    return value


# One decoder, built once: building one per call costs more than parsing a
# short line (rows, case lines).
_DECODER = json.JSONDecoder(
    object_pairs_hook=_refuse_duplicates,
    parse_constant=_refuse_constant,
    parse_float=_finite_float,
)


def canonical_bytes(value: Any, *, indent: int | None = 2) -> bytes:
    """The canonical encoding of a JSON value: sorted keys, UTF-8 without
    escaping, no NaN (``ValueError`` if one is present), a final newline."""
    text = json.dumps(
        value,
        sort_keys=True,
        ensure_ascii=False,
        allow_nan=False,
        indent=indent,
        separators=(",", ": ") if indent is not None else (",", ":"),
    )
    return (text + "\n").encode("utf-8")
