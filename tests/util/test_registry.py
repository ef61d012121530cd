"""The one registry type: a name never changes meaning, looked up or not."""

from __future__ import annotations

import pytest

from truereward.folding.registry import ENTRY_POINT_GROUP, Scheme, get_scheme
from truereward.util.registry import Registry


def kept(name: str, value: object) -> Scheme:
    assert isinstance(value, Scheme), name
    return value


def test_a_name_an_entry_point_declares_is_taken_before_its_first_lookup() -> None:
    # A registry that has loaded nothing yet, over the installed schemes:
    # registering another 'gated-binary/1' used to succeed, and every later
    # fold in the process gave that scheme's reward.
    fresh: Registry[Scheme] = Registry("scheme", ENTRY_POINT_GROUP, check=kept)
    impostor = Scheme("gated-binary/1", "not the built-in", lambda tally: 0.5)
    with pytest.raises(ValueError, match="already registered differently"):
        fresh.register("gated-binary/1", impostor)
    assert fresh.get("gated-binary/1") == get_scheme("gated-binary/1")
    # The built-in itself registers again as a no-op; a new name is free.
    fresh.register("gated-binary/1", get_scheme("gated-binary/1"))
    other = Scheme("impostor/1", "a name of its own", lambda tally: 0.5)
    assert fresh.register("impostor/1", other) is other
