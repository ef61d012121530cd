"""Dumped: a dataclass's JSON form written by pydantic from its annotations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

import pytest
from pydantic import Field, computed_field

from truereward.util.dumped import Dumped
from truereward.util.frozen import is_absent, is_empty


@dataclass(frozen=True, slots=True)
class Figures(Dumped):
    hits: int
    cost_usd: Annotated[float, Field(serialization_alias="costUsd")]
    region: tuple[float, ...] = ()
    note: Annotated[str, Field(exclude_if=is_empty)] = ""
    best: Annotated[float | None, Field(exclude_if=is_absent)] = None
    secret: Annotated[dict[str, int], Field(exclude=True)] = field(default_factory=dict)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def twice(self) -> int:
        return 2 * self.hits


def test_aliases_exclusions_and_derived_figures_come_from_the_annotations():
    plain = Figures(3, 0.25, (1.0, 2.5), secret={"k": 1})
    assert plain.to_json() == {"hits": 3, "costUsd": 0.25, "region": [1.0, 2.5], "twice": 6}
    assert list(plain.to_json()) == ["hits", "costUsd", "region", "twice"]
    full = Figures(0, 0.0, note="n", best=0.5)
    assert full.to_json() == {
        "hits": 0,
        "costUsd": 0.0,
        "region": [],
        "note": "n",
        "best": 0.5,
        "twice": 0,
    }


def test_the_mixin_keeps_a_slotted_dataclass_slotted():
    with pytest.raises((AttributeError, TypeError)):
        Figures(1, 1.0).__dict__  # noqa: B018
