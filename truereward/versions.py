"""The versions of ``grade.json``'s shape (docs/design.md, "Versions of
grade.json"): the one written now and the ones read.

Its own module so that a reader of stored grades (a sweep summary over
100,000 of them) checks the version without importing the document model.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BeforeValidator

__all__ = ["READ_VERSIONS", "SCHEMA_VERSION", "SchemaVersion"]

#: The version of the document's shape written now. A change to the shape
#: is a new version; readers check it. Version 1 (the same shape, written
#: before the versions were told apart from truereward 0.4.0's) is read too;
#: 2 is truereward 0.4.0's own shape, which is not (docs/design.md,
#: "Versions of grade.json").
SCHEMA_VERSION: Literal[3] = 3
#: Every version read.
READ_VERSIONS = (1, 3)


def _not_040(value: object) -> object:
    if isinstance(value, bool):  # a Literal of ints takes true as 1
        raise ValueError(f"schema_version is a number, got {str(value).lower()}")
    if value == 2:
        raise ValueError(
            "schema_version 2 is the grade.json of truereward 0.4.0, another shape, which "
            "this version does not read (it reads versions 1 and 3): grade the run again, "
            "or read the document with truereward 0.4.0"
        )
    return value


#: The ``schema_version`` of a document read: 1 or 3 (2 refused, saying why).
SchemaVersion = Annotated[Literal[1, 3], BeforeValidator(_not_040)]
