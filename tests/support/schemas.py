"""JSON Schema validators built once per schema.

``jsonschema.validate`` checks the schema itself on every call, which costs
far more than validating a document against it; a property test that
validates each example paid that for every example. These validators check
the schema once, pick its dialect from ``$schema`` as ``validate`` does, and
are reused."""

from __future__ import annotations

import functools
from typing import Any

from jsonschema.protocols import Validator
from jsonschema.validators import validator_for

from truereward.schemas import load


def validator(schema: dict[str, Any]) -> Validator:
    """A validator for ``schema``, after checking the schema is valid for
    its dialect (``jsonschema.validate``'s check, done once)."""
    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


@functools.cache
def shipped(name: str) -> Validator:
    """The validator of the shipped schema ``name`` (``row`` or ``grade``)."""
    return validator(load(name))
