"""``citation_coverage``: the fraction of the sources the output cites.

Sources: the check's ``sources``, else the case's (the first not empty); a
source is an id or an object whose ``id`` is taken (one without ``id``
stands for itself, with a warning); ids are read with ``str()``, empty ones
dropped. Score: cited ids / ids; no ids: 1. An id is cited when it occurs
as a whole id: the characters around it are not letters, digits, marks or
``_`` (where the id's own end is not one, no boundary is needed). So
``[src1]`` and ``src1.`` cite ``src1``, and ``src10`` does not (unlike
ai-eval-forge, which looks for a substring).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from ..context import CaseContext
from ..model import Measurement
from ..numbers import round4
from ..registry import BadCheck, CheckType, Warn
from ..text import as_python_str

#: How many missing ids the detail names.
_SHOWN = 5


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_" or unicodedata.category(char)[0] == "M"


def cites(text: str, source_id: str) -> bool:
    """Whether ``text`` cites ``source_id`` as a whole id."""
    check_before = _word_char(source_id[0])
    check_after = _word_char(source_id[-1])
    start = text.find(source_id)
    while start != -1:
        end = start + len(source_id)
        if not (check_before and start > 0 and _word_char(text[start - 1])) and not (
            check_after and end < len(text) and _word_char(text[end])
        ):
            return True
        start = text.find(source_id, start + 1)
    return False


def source_ids(sources: Any, warn: Warn, where: str) -> list[str]:
    """The ids of ``sources`` (see the module docstring)."""
    if isinstance(sources, str):
        warn(f"{where} is a string; each of its characters is read as an id")
    elif isinstance(sources, dict):
        warn(f"{where} is an object; its keys are read as ids")
    elif not isinstance(sources, list):
        raise BadCheck(f"{where}: a list of ids or {{id}} objects, got {sources!r}")
    ids: list[str] = []
    items: Iterable[Any] = sources
    for item in items:
        raw = item
        if isinstance(item, dict):
            if "id" in item:
                raw = item["id"]
            else:
                warn(f"{where}: source {item!r} has no id; its text {str(item)!r} is the id")
        if not isinstance(raw, str | dict):
            warn(f"{where}: id {raw!r} is not a string; read as {as_python_str(raw)!r}")
        source_id = as_python_str(raw)
        if source_id:
            ids.append(source_id)
    return ids


def parse(check: Mapping[str, Any], case: Mapping[str, Any], warn: Warn) -> dict[str, Any]:
    if check.get("sources"):
        return {"sources": source_ids(check["sources"], warn, "sources")}
    return {"sources": source_ids(case.get("sources") or [], warn, "case sources")}


def measure(params: Mapping[str, Any], context: CaseContext) -> Measurement:
    ids: list[str] = params["sources"]
    if not ids:
        return Measurement(1.0, (1, 1), "citation_coverage=1.0 (no source ids)")
    missing = [source_id for source_id in ids if not cites(context.actual, source_id)]
    cited = len(ids) - len(missing)
    value = cited / len(ids)
    detail = f"citation_coverage={round4(value)}"
    if missing:
        listed = ", ".join(missing[:_SHOWN]) + (" ..." if len(missing) > _SHOWN else "")
        detail += f" (not cited: {listed})"
    return Measurement(value, (cited, len(ids)), detail)


CHECK = CheckType(
    name="citation_coverage",
    description="fraction of source ids cited in the output, as whole ids",
    parse=parse,
    measure=measure,
)
