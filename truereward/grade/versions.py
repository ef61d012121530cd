"""The versions of ``grade.json``'s shape (docs/design.md, "Versions of
grade.json"): the one written now and the ones read.

Its own module so that a reader of stored grades (a sweep summary over
100,000 of them) checks the version without importing the document model.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator

__all__ = ["READ_VERSIONS", "SCHEMA_VERSION", "SCORING_VERSION", "SchemaVersion"]

#: The version of the document's shape written now for a task that declares
#: no scoring. A change to the shape is a new version; readers check it.
#: Version 1 (the same shape, written before the versions were told apart
#: from truereward 0.4.0's) is read too; 2 is truereward 0.4.0's own shape,
#: which is not (docs/design.md, "Versions of grade.json").
SCHEMA_VERSION: Literal[3] = 3
#: The version of a document that carries a task's declared scoring
#: (weights, required cases, a threshold, named dimensions: ``inputs.scoring``
#: and the fold's ``dimensions``). Written only for such documents, so that
#: every other grade keeps version 3's bytes, and a reader that knows only
#: 1 and 3 refuses a grade it would fold without its weights.
SCORING_VERSION: Literal[4] = 4
#: Every version read.
READ_VERSIONS = (1, 3, 4)


def _not_040(value: object) -> object:
    if isinstance(value, bool):  # a Literal of ints takes true as 1
        raise ValueError(f"schema_version is a number, got {str(value).lower()}")
    if value == 2:
        raise ValueError(
            "schema_version 2 is the grade.json of truereward 0.4.0, another shape, which "
            "this version does not read (it reads versions 1, 3 and 4): grade the run again, "
            "or read the document with truereward 0.4.0"
        )
    return value


#: The ``schema_version`` of a document read: 1, 3 or 4 (2 refused, saying why).
SchemaVersion = Annotated[Literal[1, 3, 4], BeforeValidator(_not_040)]
