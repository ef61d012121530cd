"""``contains``: the output contains each of the listed substrings.

Substrings: the check's ``value`` (a list, or one value), else the case's
``expected``. A value that is not a string is looked for as Python's
``str()`` of it (``5`` → ``"5"``, ``null`` → ``"None"``), as ai-eval-forge
does; a warning says so. Case-insensitive (``lower()`` on both sides) unless
``caseSensitive`` is truthy. Score: found / listed; nothing listed: 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..context import CaseContext
from ..model import Measurement
from ..registry import CheckType, Warn
from ..text import as_python_str


def parse(check: Mapping[str, Any], case: Mapping[str, Any], warn: Warn) -> dict[str, Any]:
    flag = check.get("caseSensitive", False)
    if not isinstance(flag, bool):
        warn(f"caseSensitive {flag!r} is not a boolean; read as {bool(flag)}")
    params: dict[str, Any] = {"caseSensitive": bool(flag)}
    if "value" in check:
        raw = check["value"]
        listed = raw if isinstance(raw, list) else [raw]
        for item in listed:
            if not isinstance(item, str):
                warn(f"value {item!r} is not a string; looking for {as_python_str(item)!r}")
        if not listed:
            warn("value is an empty list: nothing to look for, the check always scores 1")
        params["value"] = [as_python_str(item) for item in listed]
    return params


def measure(params: Mapping[str, Any], context: CaseContext) -> Measurement:
    wanted: list[str] = params.get("value", [context.expected])
    if not wanted:
        return Measurement(1.0, (1, 1), "0/0 substrings found")
    if params["caseSensitive"]:
        haystack = context.actual
        found = sum(1 for item in wanted if item in haystack)
    else:
        haystack = context.actual.lower()
        found = sum(1 for item in wanted if item.lower() in haystack)
    return Measurement(
        found / len(wanted), (found, len(wanted)), f"{found}/{len(wanted)} substrings found"
    )


CHECK = CheckType(
    name="contains",
    description="fraction of the listed substrings found in the output",
    parse=parse,
    measure=measure,
)
