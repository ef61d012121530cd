"""Strict JSON in and canonical JSON out.

Everything truereward reads or writes is strict JSON (RFC 8259): Python's
``json`` module accepts ``NaN``, ``Infinity`` and duplicate object keys, and a
document that carries them means different things to different readers, so
both are refused here. Output is canonical: sorted keys, UTF-8, no NaN, so the
same value always gives the same bytes (and the same sha256).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from .exceptions import TruerewardError

__all__ = ["MAX_DEPTH", "StrictJSONError", "canonical_bytes", "check_depth", "loads"]

#: The deepest nesting :func:`check_depth` allows by default: documents we
#: read (task specs, reports within reports) nest a few levels.
MAX_DEPTH = 64


class StrictJSONError(TruerewardError, ValueError):
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


def check_depth(value: Any, what: str, limit: int = MAX_DEPTH) -> None:
    """``ValueError`` naming ``what`` when ``value`` (a JSON value) nests
    arrays and objects more than ``limit`` deep. A scalar has depth 0, ``{}``
    and ``[1]`` have depth 1. Iterative, so any depth is checked without
    recursion."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth + 1 > limit:
            raise ValueError(f"{what} nests deeper than {limit} levels")
        stack.extend((child, depth + 1) for child in children)


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


def canonical_bytes(
    value: Any,
    *,
    indent: int | None = 2,
    finite: bool = False,
    floats: Iterable[float | None] | None = None,
) -> bytes:
    """The canonical encoding of a JSON value: sorted keys, UTF-8 without
    escaping, no NaN (``ValueError`` if one is present), a final newline;
    two-space indent, or none (``indent=None``: the compact form).

    The bytes are those of the standard library's ``json.dumps`` with these
    settings (they name published grades, so they never change). With
    ``finite`` the caller vouches that every float is finite (the value was
    dumped from validated, immutable models: documents, their views), and
    orjson makes the bytes faster: it writes the same bytes except for
    floats below 1e-4 (``1e-07``, which it writes ``1e-7``), which are then
    handed to it already written as Python does; anything it refuses (an
    integer beyond 64 bits, a key that is not a string) takes the standard
    library's path. (orjson writes a NaN as ``null`` rather than refusing
    it, hence the vouching.) That holds from orjson 3.11.7, the floor
    pyproject.toml sets: before it orjson wrote floats of 1e16 and more
    without the exponent's sign (``1e16`` where Python writes ``1e+16``),
    and a grade's bytes depended on the worker's orjson.

    ``floats`` (with ``finite``): every float ``value`` holds, named by a
    caller that knows them (the CTRF view holds one, the reward). When none
    is below 1e-4 in magnitude (0 aside), orjson writes each as Python does
    and its output is taken as it is; otherwise, and without ``floats``,
    the output is searched for such a float, which costs about as much as
    encoding a CTRF view."""
    if finite and _orjson is not None and indent in (2, None):
        options = _SORTED | (_INDENT if indent == 2 else 0)
        try:
            out = _orjson.dumps(value, option=options)
            if (floats is None or any(_written_otherwise(item) for item in floats)) and (
                _SMALL_EXPONENT.search(out) or _SMALL_DECIMAL.search(out)
            ):
                # Perhaps a float written otherwise than Python does: write
                # those floats as Python does, and let orjson do the rest.
                out = _orjson.dumps(_as_python_writes_floats(value), option=options)
            return bytes(out) + b"\n"
        except (TypeError, _orjson.JSONEncodeError):
            pass  # the standard library says what is wrong, or encodes it
    text = json.dumps(
        value,
        sort_keys=True,
        ensure_ascii=False,
        allow_nan=False,
        indent=indent,
        separators=(",", ": ") if indent is not None else (",", ":"),
    )
    return (text + "\n").encode("utf-8")


def _written_otherwise(value: float | None) -> bool:
    # Checked over every finite float: orjson writes 0 and anything at
    # least 1e-4 in magnitude exactly as repr() does (1e+16 too).
    return value is not None and value != 0 and abs(value) < 1e-4


def _as_python_writes_floats(value: Any) -> Any:
    """``value`` with every float that orjson would write otherwise (a
    negative exponent) replaced by Python's own text of it; a NaN or an
    infinity is a ``ValueError``, as ``allow_nan=False`` makes it."""
    if isinstance(value, dict):
        return {key: _as_python_writes_floats(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_as_python_writes_floats(item) for item in value]
    if type(value) is float:
        text = repr(value)
        if "e-" in text:
            return _orjson.Fragment(text.encode("ascii"))
        if value != value or value in (_INF, -_INF):
            raise ValueError(f"Out of range float values are not JSON compliant: {text}")
    return value


_INF = float("inf")
#: What a float below 1e-4 looks like in orjson's output (``1e-7``,
#: ``0.00001``), where Python writes ``1e-07`` and ``1e-05``; a string that
#: happens to look so only costs the slower, exact path. Two patterns, each
#: with a literal prefix the regex engine scans for quickly: their
#: alternation in one pattern costs about seven times as much (40 us over a
#: 20-case CTRF view, more than encoding it).
_SMALL_EXPONENT = re.compile(rb"e-\d")
_SMALL_DECIMAL = re.compile(rb"0\.0000\d")

try:  # orjson is a dependency; the standard library path stays for any other setup
    import orjson as _orjson

    _SORTED = _orjson.OPT_SORT_KEYS
    _INDENT = _orjson.OPT_INDENT_2
except ImportError:  # pragma: no cover - orjson is installed with truereward
    _orjson = None  # type: ignore[assignment]
    _SORTED = _INDENT = 0
