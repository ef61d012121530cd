"""Reading case files: JSON array or JSONL, streamed in chunks, with line
numbers; problems stay with their case."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from truereward.checks import casefile
from truereward.checks.casefile import RawCase, read_cases, read_chunks


def read(data: bytes) -> list[RawCase]:
    return list(read_cases(io.BytesIO(data)))


def test_jsonl_lines_and_positions():
    data = b'\n{"a": 1}\r\n   \n{"b": 2}\n\t\n{"c": 3}'
    assert read(data) == [
        RawCase(2, 0, '{"a": 1}\r'),
        RawCase(4, 1, '{"b": 2}'),
        RawCase(6, 2, '{"c": 3}'),
    ]


def test_unicode_blank_lines_are_skipped_like_ai_eval_forge():
    # ai-eval-forge skips lines whose str.strip() is empty
    assert [case.line for case in read('{"a":1}\n\u00a0\u2003\n{"b":2}'.encode())] == [1, 3]


def test_bom_and_leading_whitespace():
    assert read(b'\xef\xbb\xbf{"a": 1}\n') == [RawCase(1, 0, '{"a": 1}')]
    assert read(b'\xef\xbb\xbf \n [ {"a": 1} ]') == [RawCase(2, 0, '{"a": 1}')]


def test_a_line_that_is_not_utf8_is_a_case_with_a_problem():
    cases = read(b'{"a": 1}\n{"b": "\xff"}\n{"c": 3}\n')
    assert cases[1] == RawCase(2, 1, None, "not UTF-8 text (byte 8 of the line)")
    assert cases[2] == RawCase(3, 2, '{"c": 3}')


def test_array_elements_with_their_lines():
    data = b'[\n  {"a": 1},\n  {"b":\n    [1, 2]},\n  3, "x",\n  {"c": {"d": "]"}}\n]\n'
    assert read(data) == [
        RawCase(2, 0, '{"a": 1}'),
        RawCase(3, 1, '{"b":\n    [1, 2]}'),
        RawCase(5, 2, "3"),
        RawCase(5, 3, '"x"'),
        RawCase(6, 4, '{"c": {"d": "]"}}'),
    ]
    assert read(b"[]") == [] and read(b"  [ \n ] \n") == []
    assert read(b"") == [] and read(b"\n \n") == []


@pytest.mark.parametrize(
    ("data", "line", "problem"),
    [
        (b'[{"a": 1},\n{"b": }]', 2, "invalid JSON at line 2: Expecting value"),
        (b'[{"a": 1},\n]', 2, "a comma before the closing ]"),
        (b'[{"a": 1}\n{"b": 2}]', 2, "expected ',' or ']' after a case, found '{'"),
        (b'[{"a": 1},\n{"b": 2}', 2, "the array is not closed"),
        (b'[{"a": 1}]\n{"b": 2}', 2, "unexpected text after the array's closing ]"),
        (b'[{"a": "x\ny"}]', 1, "invalid JSON at line 1: Invalid control character"),
    ],
)
def test_a_broken_array_ends_with_a_problem(data, line, problem):
    cases = read(data)
    last = cases[-1]
    assert last.text is None and last.line == line and problem in last.problem, last
    assert last.problem.endswith("the rest of the file was not read")


def test_chunks_count_lines_and_cases_without_parsing(monkeypatch):
    monkeypatch.setattr(casefile, "CHUNK", 16)
    data = b'{"id": "one"}\n\n{"id": "two"}\n   \n{"id": "three"}\n{"id": "four"}'
    chunks = list(read_chunks(io.BytesIO(data)))
    assert len(chunks) > 1
    assert all(isinstance(chunk.data, bytes) for chunk in chunks)
    assert [(case.line, case.position) for case in read(data)] == [(1, 0), (3, 1), (5, 2), (6, 3)]


def test_a_line_longer_than_a_chunk(monkeypatch):
    monkeypatch.setattr(casefile, "CHUNK", 8)
    long = json.dumps({"id": "long", "actual": "x" * 100})
    assert read(f'{{"a":1}}\n{long}\n{{"b":2}}'.encode()) == [
        RawCase(1, 0, '{"a":1}'),
        RawCase(2, 1, long),
        RawCase(3, 2, '{"b":2}'),
    ]


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=8,
)


@pytest.mark.slow
@given(
    st.lists(values, max_size=8),
    st.integers(1, 40),
    st.sampled_from(["\n", ",\n", ",", " , \n\n"]),
    st.booleans(),
)
def test_any_chunk_size_reads_the_same(cases, chunk, joiner, array):
    if array:
        separator = joiner if "," in joiner else ","
        text = "[" + separator.join(json.dumps(case, indent=1) for case in cases) + "]"
    else:
        # (a JSONL file whose first case is an array reads as one array)
        assume(not cases or not isinstance(cases[0], list))
        text = "\n\n".join(json.dumps(case) for case in cases)
    data = text.encode()
    whole = read(data)
    original = casefile.CHUNK
    casefile.CHUNK = chunk
    try:
        assert read(data) == whole
    finally:
        casefile.CHUNK = original
    assert [json.loads(case.text) for case in whole] == cases
    assert [case.position for case in whole] == list(range(len(cases)))


@given(st.binary(max_size=200), st.integers(1, 32))
@example(b"\xef\xbb\xbf", 1)  # a byte-order mark split across 1-byte reads (found once)
def test_garbage_never_raises_and_chunking_does_not_matter(data, chunk):
    whole = read(data)
    original = casefile.CHUNK
    casefile.CHUNK = chunk
    try:
        assert read(data) == whole
    finally:
        casefile.CHUNK = original
    assert [case.position for case in whole] == list(range(len(whole)))
    for case in whole:
        assert (case.text is None) == (case.problem is not None)
