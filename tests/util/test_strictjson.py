"""Canonical bytes: orjson's fast path writes exactly what the standard
library writes, for every finite JSON value (these bytes name grades)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tests.support.strategies import floats_in
from truereward.util.strictjson import canonical_bytes


def reference(value: Any, indent: int | None) -> bytes:
    text = json.dumps(
        value,
        sort_keys=True,
        ensure_ascii=False,
        allow_nan=False,
        indent=indent,
        separators=(",", ": ") if indent is not None else (",", ":"),
    )
    return (text + "\n").encode("utf-8")


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=30,
)


@pytest.mark.slow
@given(json_values, st.sampled_from([2, None]))
@example({"a": 1e-07, "b": 1e-05, "c": 0.0001, "d": "e-5 0.00001"}, 2)
@example([5e-324, -0.0, 1e16, 1e-4, 9.9e-05, 123456789.0], None)
@example({"\U0001f600": "\u2028\x7f\x00", "b": [], "c": {}}, 2)
def test_the_fast_path_writes_the_standard_librarys_bytes(value: Any, indent: int | None) -> None:
    assert canonical_bytes(value, indent=indent, finite=True) == reference(value, indent)
    assert canonical_bytes(value, indent=indent) == reference(value, indent)


def test_a_nan_is_refused_unless_vouched_for() -> None:
    with pytest.raises(ValueError, match="JSON compliant"):
        canonical_bytes({"a": float("nan")})


@pytest.mark.slow
@given(json_values, st.sampled_from([2, None]))
@example({"a": 1e-07, "b": [1e-05, 0.0]}, 2)
@example([9.999999999999999e-05, -0.0001, 1e16], None)
def test_named_floats_skip_the_search_only_when_orjson_writes_them_as_python_does(
    value: Any, indent: int | None
) -> None:
    # A caller that names every float gets the same bytes as one that does not.
    named = canonical_bytes(value, indent=indent, finite=True, floats=floats_in(value))
    assert named == reference(value, indent)


@given(st.floats(allow_nan=False, allow_infinity=False))
@example(1e-4)
@example(-1e-4)
@example(-0.0)
@example(1e16)
def test_orjson_writes_a_float_as_python_does_unless_it_is_below_1e_4(value: float) -> None:
    # The rule the shortcut rests on (canonical_bytes's floats=), checked on
    # the predicate it uses; the examples are the edges of the rule (a float
    # below 1e-4 is searched for, and asserts nothing here).
    import orjson

    from truereward.util.strictjson import _written_otherwise

    if not _written_otherwise(value):
        assert orjson.dumps(value).decode() == repr(value)


#: Figures orjson before 3.11.7 wrote otherwise (1e16 for 1e+16), beside one
#: below 1e-4 and plain ones: their bytes are pinned, so a worker with
#: another orjson cannot give a grade other bytes (another sha256).
FIGURES = [1e16, 1.2345678901234568e17, -1e22, 9007199254740992.0, 1e-07, 0.0001, 2.5]


@pytest.mark.parametrize(
    ("indent", "expected"),
    [
        (
            2,
            b'{\n  "figures": [\n    1e+16,\n    1.2345678901234568e+17,\n    -1e+22,\n'
            b"    9007199254740992.0,\n    1e-07,\n    0.0001,\n    2.5\n  ]\n}\n",
        ),
        (
            None,
            b'{"figures":[1e+16,1.2345678901234568e+17,-1e+22,9007199254740992.0,1e-07,0.0001,2.5]}\n',
        ),
    ],
    ids=["indented", "compact"],
)
def test_large_and_small_figures_have_pinned_bytes(indent: int | None, expected: bytes) -> None:
    for finite in (True, False):
        assert canonical_bytes({"figures": FIGURES}, indent=indent, finite=finite) == expected


def test_a_grade_with_large_figures_has_the_standard_librarys_bytes() -> None:
    import hashlib

    from truereward import GradeDocument, grade_document

    names = ("big", "bigger", "negative", "exact", "small", "edge", "plain")
    measures = dict(zip(names, FIGURES, strict=True))
    document = grade_document(
        [{"id": "a", "kind": "fail_to_pass", "verdict": "pass", "measures": measures}]
    )
    raw = document.to_bytes()
    assert (
        b'"measures": {\n        "big": 1e+16,\n        "bigger": 1.2345678901234568e+17,\n'
        b'        "edge": 0.0001,\n        "exact": 9007199254740992.0,\n'
        b'        "negative": -1e+22,\n        "plain": 2.5,\n        "small": 1e-07\n      }'
    ) in raw
    assert raw == reference(json.loads(raw), 2)  # every other byte too
    assert document.digest == hashlib.sha256(raw).hexdigest()
    assert GradeDocument.from_bytes(raw).to_bytes() == raw  # read back, the same bytes
