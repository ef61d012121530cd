"""``json_field``: a field of the JSON output has the expected value.

The output is parsed as JSON; ``path`` leads to the field
(:mod:`truereward.checks.jsonpath`; empty: the whole value). Score 1 when,
with ``exists: true``, the field is there (and equals ``value`` if given);
with ``exists: false``, it is not; otherwise it is there and equals
``value``. Equality is ai-eval-forge's (sorted-key JSON text: ``1`` and
``1.0`` differ, ``true`` is not ``1``); unlike there, a missing field, a
path through ``null`` or output that is not JSON never equals ``null``.
docs/checks.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..context import NOT_JSON, CaseContext
from ..jsonpath import MISSING, lookup, segments
from ..model import Measurement
from ..registry import BadCheck, CheckType, Warn
from ..text import as_python_str

_PASS = (1, 1)
_FAIL = (0, 1)
#: ``json.dumps(value, sort_keys=True)``, with the encoder built once.
_CANONICAL = json.JSONEncoder(sort_keys=True).encode


def parse(check: Mapping[str, Any], case: Mapping[str, Any], warn: Warn) -> dict[str, Any]:
    raw_path = check.get("path") or ""
    path = as_python_str(raw_path)
    if not isinstance(raw_path, str):
        warn(f"path {raw_path!r} is not a string; read as {path!r}")
    if path and "" in path.split("."):
        warn(f"path {path!r} has empty segments; read as {'.'.join(segments(path))!r}")
    params: dict[str, Any] = {"path": path}
    exists = check.get("exists")
    if exists is not None and not isinstance(exists, bool):
        raise BadCheck(f"exists: true or false, got {exists!r}")
    if exists is not None:
        params["exists"] = exists
    if "value" in check:
        if exists is False:
            raise BadCheck("exists: false and a value cannot both hold; give one of them")
        params["value"] = check["value"]
    elif exists is None:
        warn("no value: the field must be null (use exists: true to only require the field)")
        params["value"] = None
    return params


def measure(params: Mapping[str, Any], context: CaseContext) -> Measurement:
    path = params["path"]
    shown = path or "(the whole output)"
    parsed = context.output_json()
    if parsed is NOT_JSON:
        return Measurement(0.0, _FAIL, f"output is {context.output_json_error()}")
    found = lookup(parsed, path)
    exists = params.get("exists")
    if found is MISSING:
        if exists is False:
            return Measurement(1.0, _PASS, f"{shown} is missing, as required")
        return Measurement(0.0, _FAIL, f"{shown} is missing")
    text = _CANONICAL(found)
    detail = f"{path}={text}"
    if exists is False:
        return Measurement(0.0, _FAIL, f"{detail} (required to be missing)")
    if "value" in params and text != _CANONICAL(params["value"]):
        return Measurement(0.0, _FAIL, detail)
    return Measurement(1.0, _PASS, detail)


CHECK = CheckType(
    name="json_field",
    description="a field of the JSON output exists / equals a value",
    parse=parse,
    measure=measure,
)
