"""truereward.record.validation.describe: the one wording of a validation error."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from truereward.record.validation import describe


class Item(BaseModel):
    model_config = ConfigDict(strict=True)

    id: str | int
    size: int
    tags: list[str] = []

    @model_validator(mode="after")
    def _positive(self) -> Item:
        if self.size < 0:
            raise ValueError("size: not negative")
        return self


def error_of(value: object) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        Item.model_validate(value)
    return caught.value


def test_each_error_names_its_field_path() -> None:
    assert describe(error_of({"id": "a", "size": 1, "tags": [3]})) == (
        "tags.0: Input should be a valid string"
    )


def test_a_limit_says_how_many_were_left_out() -> None:
    error = error_of({"id": 1.5, "size": "x", "tags": [1, 2]})
    assert describe(error, limit=1).endswith("; and 4 more")
    assert describe(error, limit=0) == describe(error, limit=1)


def test_depth_keeps_the_top_level_field_only() -> None:
    error = error_of({"id": 1.5, "size": 1})
    assert describe(error).startswith("id.str: ")
    assert describe(error, depth=1) == (
        "id: Input should be a valid string; id: Input should be a valid integer"
    )


def test_a_model_validator_names_its_field_and_whole_names_the_input() -> None:
    assert describe(error_of({"id": "a", "size": -1})) == "size: not negative"
    assert describe(error_of([]), whole="(item)").startswith("(item): ")
