"""The JSON Schemas of the record and the grade document, shipped in the
package (``row.schema.json``, ``grade.schema.json``).

They are generated from the pydantic models by :func:`generate`; a test
checks the shipped files match, and ``python -m truereward.schemas`` writes
them again after a model changes.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["NAMES", "generate", "load"]

#: Schema name -> file name.
NAMES = {"row": "row.schema.json", "grade": "grade.schema.json"}

_IDS = {
    "row": "https://truereward.invalid/schemas/row.schema.json",
    "grade": "https://truereward.invalid/schemas/grade.schema.json",
}


def generate(name: str) -> dict[str, Any]:
    """The schema ``name`` (``row`` or ``grade``) generated from the models.

    A row holds its evaluation report as data (any JSON object: the record
    does not import the evaluation model); the shipped schemas describe the
    report's shape, from :class:`~truereward.evaluate.EvaluationReport`, so a
    tool that checks rows against them checks the report too."""
    if name == "row":
        from ..record.cases import CaseResult

        schema = _with_report_shape(CaseResult.model_json_schema(), None)
        title = "truereward case result row"
    elif name == "grade":
        from ..grade.document import GradeDocument

        schema = _with_report_shape(GradeDocument.model_json_schema(), "CaseResult")
        title = "truereward grade document (grade.json), schema version 3 (1 read too)"
    else:
        raise KeyError(f"unknown schema {name!r}; known: {', '.join(NAMES)}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": _IDS[name],
        **schema,
        "title": title,
    }


def _with_report_shape(schema: dict[str, Any], row_definition: str | None) -> dict[str, Any]:
    """``schema`` with the row's ``report`` property (in the definition
    ``row_definition``, or at the top) described as an evaluation report."""
    from ..evaluate import EvaluationReport

    report = EvaluationReport.model_json_schema(ref_template="#/$defs/{model}")
    definitions = schema.setdefault("$defs", {})
    definitions.update(report.pop("$defs", {}))
    if "$ref" not in report:  # a recursive model is all in $defs already
        definitions["EvaluationReport"] = report
    row = schema if row_definition is None else definitions[row_definition]
    row["properties"]["report"] = {
        "anyOf": [{"$ref": "#/$defs/EvaluationReport"}, {"type": "null"}],
        "default": None,
    }
    return schema


def load(name: str) -> dict[str, Any]:
    """The shipped schema ``name`` (``row`` or ``grade``)."""
    if name not in NAMES:
        raise KeyError(f"unknown schema {name!r}; known: {', '.join(NAMES)}")
    text = resources.files(__name__).joinpath(NAMES[name]).read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def write_all(directory: Path | None = None) -> list[Path]:
    """Write every generated schema next to this module (or into
    ``directory``); returns the paths written."""
    where = directory or Path(__file__).parent
    paths = []
    for name, file_name in NAMES.items():
        path = where / file_name
        path.write_text(
            json.dumps(generate(name), indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        paths.append(path)
    return paths
