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
    """The schema ``name`` (``row`` or ``grade``) generated from the models."""
    if name == "row":
        from ..cases import CaseResult

        schema = CaseResult.model_json_schema()
        title = "truereward case result row"
    elif name == "grade":
        from ..document import GradeDocument

        schema = GradeDocument.model_json_schema()
        title = "truereward grade document (grade.json), schema version 1"
    else:
        raise KeyError(f"unknown schema {name!r}; known: {', '.join(NAMES)}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": _IDS[name],
        **schema,
        "title": title,
    }


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
