"""The test-report readers read as a stream: what they keep, what they
record, and the report shapes an external comparison found them wrong on
(the files of tests/data/shapes, graded by infra/check_evidence.py too)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tests.support.scripts import load_script
from truereward import Ungradable, fold, read
from truereward.readers import Evidence, read_with_evidence
from truereward.readers import ctrf as ctrf_reader
from truereward.readers import junit as junit_reader
from truereward.readers.evidence import EvidenceStream
from truereward.readers.matching import trimmed_fallback
from truereward.readers.outcomes import rows_for
from truereward.record.taskspec import TaskSpec


def load_check_evidence():
    return load_script("infra/check_evidence.py")


def test_the_hand_written_shapes_grade_as_expected(capsys):
    checked, problems = load_check_evidence().check_shapes()
    assert problems == []
    expected = json.loads((ROOT / "tests/data/shapes/EXPECTED.json").read_text())
    assert checked == len(expected) >= 9
    assert capsys.readouterr().out.count("as expected") == checked


def write(tmp_path: Path, name: str, data: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


# --- the fixes, one by one ---------------------------------------------------------------------


def test_a_nameless_testcase_is_one_invalid_entry(tmp_path):
    path = write(
        tmp_path,
        "junit.xml",
        '<testsuite><testcase classname="c" name="a"/><testcase classname="c" name="">'
        '<failure/></testcase><testcase classname="c" name="b"><failure/></testcase></testsuite>',
    )
    report = junit_reader.parse_junit(Path(path).read_bytes())
    assert (report.tests, report.nameless, len(report.entries)) == (3, 1, 2)
    rows = {
        row.id: row
        for row in read(
            "junit", path, {"c.a": "fail_to_pass", "c.b": "pass_to_pass", "c.z": "pass_to_pass"}
        )
    }
    assert (rows["c.a"].verdict, rows["c.b"].verdict, rows["c.z"].verdict) == (
        "pass",
        "fail",
        "fail",
    )
    assert rows["c.z"].why.endswith(
        "(it also lists 1 test without a name or with one over 1024 characters, "
        "which no case can match)"
    )
    assert rows["c.a"].why == ""  # a matched row says nothing of it


def test_a_blank_name_is_no_name(tmp_path):
    junit = write(
        tmp_path, "j.xml", '<testsuite><testcase name="  "/><testcase name="a"/></testsuite>'
    )
    assert junit_reader.parse_junit(Path(junit).read_bytes()).nameless == 1
    tests = [
        {"name": " \n", "status": "passed"},
        {"name": 7, "status": "passed"},
        {"name": "a", "status": "passed"},
    ]
    report = ctrf_reader.parse_ctrf(json.dumps({"results": {"tests": tests}}).encode())
    assert (report.tests, report.nameless, [entry.label for entry in report.entries]) == (
        3,
        2,
        ["a"],
    )


@pytest.mark.parametrize("tags", [5, True, False, 0, "xfail", {"xfail": 1}, {}])
def test_tags_of_the_wrong_shape_are_a_malformed_entry_for_its_case_only(tmp_path, tags):
    tests = [
        {"name": "odd", "status": "skipped", "tags": tags},
        {"name": "fine", "status": "passed", "tags": ["a"]},
    ]
    path = write(
        tmp_path, "ctrf.json", json.dumps({"reportFormat": "CTRF", "results": {"tests": tests}})
    )
    case_set = {"odd": "fail_to_pass", "fine": "fail_to_pass"}
    rows = {row.id: row for row in read("ctrf", path, case_set)}
    assert rows["odd"].verdict == "ungradable"
    assert rows["odd"].code == "EVIDENCE_MALFORMED"
    assert "results.tests[0]: tags is" in rows["odd"].why and "not a list" in rows["odd"].why
    assert rows["fine"].verdict == "pass"
    result = fold(list(rows.values()), case_set=case_set)
    assert not result.gradable
    assert [(refusal.code, refusal.blame.value) for refusal in result.refusals] == [
        ("EVIDENCE_MALFORMED", "run")
    ]


def test_a_malformed_entry_nobody_declared_changes_nothing(tmp_path):
    tests = [{"name": "odd", "status": "passed", "tags": 5}, {"name": "fine", "status": "passed"}]
    path = write(tmp_path, "ctrf.json", json.dumps({"results": {"tests": tests}}))
    (row,) = read("ctrf", path, {"fine": "fail_to_pass"})
    assert row.verdict == "pass"


@pytest.mark.parametrize("reader", ["junit", "ctrf"])
def test_names_match_after_trimming_only_when_nothing_matches_as_written(tmp_path, reader):
    names = ["spaced ", "newline\n", "both\t", " both", "exact", "exact "]
    outcomes = ["passed", "failed", "passed", "failed", "passed", "failed"]
    if reader == "junit":
        results = {"passed": "", "failed": "<failure/>"}
        body = "".join(
            f"<testcase name={quoteattr(name)}>{results[outcome]}</testcase>"
            for name, outcome in zip(names, outcomes, strict=True)
        )
        path = write(tmp_path, "r.xml", f"<testsuite>{body}</testsuite>")
    else:
        tests = [{"name": n, "status": o} for n, o in zip(names, outcomes, strict=True)]
        path = write(tmp_path, "r.json", json.dumps({"results": {"tests": tests}}))
    case_set = dict.fromkeys(["spaced", "newline", "both", "exact"], "fail_to_pass")
    rows = {row.id: row for row in read(reader, path, case_set)}
    assert rows["spaced"].verdict == "pass"
    assert rows["newline"].verdict == "fail" and "failed" in rows["newline"].why
    assert rows["both"].code == "CASE_INVALID" and "ambiguous" in rows["both"].why
    assert rows["exact"].verdict == "pass"  # "exact " is another test: the name as written wins


# --- the stream: digests, chunks, limits, URLs -------------------------------------------------


def test_an_early_refusal_still_digests_the_whole_file(tmp_path):
    data = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><testsuite>' + b" " * (3 << 20)
    path = write(tmp_path, "big.xml", data + b"</testsuite>")
    source = Evidence(url=path)
    with pytest.raises(Ungradable) as caught:
        read("junit", source, {"a": "fail_to_pass"})
    assert "DTD" in caught.value.why
    (digest,) = source.digests
    assert digest.size == len(data) + len(b"</testsuite>")
    assert digest.sha256 == hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.mark.parametrize("reader", ["junit", "ctrf"])
def test_characters_split_across_chunks_and_a_bom_are_read(tmp_path, reader):
    """Reports of several chunks whose multi-byte names straddle the chunk
    boundaries."""
    names = [f"tést-{'é' * (i % 7)}-{i}" for i in range(60_000)]
    if reader == "junit":
        body = "".join(f'<testcase classname="ç" name="{name}"/>' for name in names)
        data = b"\xef\xbb\xbf" + f"<testsuite>{body}</testsuite>".encode()
    else:
        tests = [{"name": name, "status": "passed"} for name in names]
        data = (
            b"\xef\xbb\xbf" + json.dumps({"results": {"tests": tests}}, ensure_ascii=False).encode()
        )
    assert len(data) > 2 << 20
    path = write(tmp_path, "report", data)
    case_set = dict.fromkeys(names[::997], "fail_to_pass")
    rows = read(reader, path, case_set)
    assert {row.verdict for row in rows} == {"pass"} and len(rows) == len(case_set)


def test_the_stream_refuses_a_file_that_grows_past_the_limit():
    chunks = [b"x" * 6, b"y" * 6]
    stream = EvidenceStream(
        lambda size: chunks.pop(0) if chunks else b"",
        "grows.json",
        10,
        lambda where, size: Ungradable("EVIDENCE_MALFORMED", f"{where}: {size} is more than 10"),
    )
    assert stream.read(100) == b"x" * 6
    with pytest.raises(Ungradable) as caught:
        stream.read(100)
    assert caught.value.code == "EVIDENCE_MALFORMED" and "more than" in caught.value.why
    with pytest.raises(Ungradable):
        stream.drain()  # once broken, always broken


def test_an_io_error_while_streaming_is_evidence_unreadable():
    def fails(size: int) -> bytes:
        raise OSError(5, "Input/output error")

    stream = EvidenceStream(fails, "disk.xml", 100, lambda where, size: AssertionError())
    with pytest.raises(Ungradable) as caught:
        junit_reader.read_junit(stream, "disk.xml")
    assert caught.value.code == "EVIDENCE_UNREADABLE"


@pytest.mark.parametrize("reader", ["junit", "ctrf"])
def test_a_url_is_streamed_through_fsspec(reader):
    fsspec = pytest.importorskip("fsspec")
    data = (
        b'<testsuite><testcase classname="c" name="t"/></testsuite>'
        if reader == "junit"
        else b'{"results": {"tests": [{"name": "c.t", "status": "passed"}]}}'
    )
    url = f"memory://stream-{reader}/report"
    with fsspec.open(url, "wb") as out:
        out.write(data)
    reading = read_with_evidence(reader, url, {"c.t": "fail_to_pass"})
    assert [row.verdict for row in reading.rows] == ["pass"]
    (digest,) = reading.evidence
    assert (digest.sha256, digest.size) == (hashlib.sha256(data).hexdigest(), len(data))


# --- strict JSON on every part of a CTRF report, read or not -------------------------------------

GOOD_TESTS = '"tests": [{"name": "a", "status": "passed"}]'


@pytest.mark.parametrize(
    ("document", "why"),
    [
        ('{"results": {"summary": {"n": 1, "n": 2}, ' + GOOD_TESTS + "}}", "duplicate key 'n'"),
        ('{"results": {' + GOOD_TESTS + '}, "results": {' + GOOD_TESTS + "}}", "duplicate key"),
        ('{"extra": [NaN], "results": {' + GOOD_TESTS + "}}", "NaN"),
        ('{"extra": -Infinity, "results": {' + GOOD_TESTS + "}}", "Infinity"),
        ('{"environment": {"x": 1e400}, "results": {' + GOOD_TESTS + "}}", "overflow"),
        ('{"extra": 1' + "0" * 5000 + ', "results": {' + GOOD_TESTS + "}}", "overflow"),
        ('{"results": {' + GOOD_TESTS + "}} {}", "trailing garbage"),
        ('{"extra": ' + "[" * 600 + "]" * 600 + ', "results": {' + GOOD_TESTS + "}}", "too deeply"),
        (
            '{"results": {"tests": [{"name": "a", "status": "passed", "x": '
            + "{}"
            + ', "x": 1}]}}',
            "duplicate",
        ),
        ('\ufeff\ufeff{"results": {' + GOOD_TESTS + "}}", "not JSON"),
    ],
)
def test_json_that_is_not_strict_is_refused_wherever_it_is(tmp_path, document, why):
    path = write(tmp_path, "ctrf.json", document)
    with pytest.raises(Ungradable) as caught:
        read("ctrf", path, {"a": "fail_to_pass"})
    assert caught.value.code == "EVIDENCE_MALFORMED"
    assert "not JSON" in caught.value.why and why in caught.value.why


def test_strict_json_that_is_fine_is_read(tmp_path):
    document = (
        '\ufeff {"extra": ' + "[" * 400 + "]" * 400 + ', "results": {"tests": [{"name": "a", '
        '"status": "passed", "duration": 1.5e3, "extra": {"big": 9223372036854775807, '
        '"tiny": 1e-400, "s": "\\ud83d\\ude00"}}]}}\n'
    )
    path = write(tmp_path, "ctrf.json", document)
    (row,) = read("ctrf", path, {"a": "fail_to_pass"})
    # a legacy report (no reportFormat): a float duration is seconds
    assert row.verdict == "pass" and row.measures["duration_ms"] == 1_500_000.0


def test_the_c_backend_is_the_one_read_with():
    from truereward.readers import streamjson

    assert streamjson.backend().backend_name == "yajl2_c"


# --- keeping only what a declared case can match changes no row -------------------------------

JUNIT_NAMES = ["t", "t[1]", "t[2]", "test_x", "a b", "t ", " t", "t\n", "x::y", "sub/t", ""]
JUNIT_CLASSES = [
    "",
    "c",
    "tests.test_a",
    "app.tests.test_a",
    "tests.test_b",
    "test_a",
    "C::D",
    "c ",
]
JUNIT_BODIES = ["", "<failure/>", "<error/>", "<skipped/>", "<skipped type='pytest.xfail'/>"]
JUNIT_IDS = [
    "t", "t[1]", "t[2]", "test_x", "c.t", "c::t", "tests/test_a.py::t", "test_a.py::t",
    "tests/test_a.py::t[1]", "app/tests/test_a.py::test_x", "tests.test_a.t", "C::D::t", "C.D::t",
    "sub/t", "x::y", "a b", "c.test_x", "tests/test_b.py::t", "b/tests/test_a.py::t",
]  # fmt: skip

CTRF_NAMES = [
    "t", "t[1]", "tests/test_a.py::t", "test_a.py::t", "app/tests/test_a.py::t",
    "tests/test_a.py::t[1]", "tests/test_a.py::t ", "sub/t", "a b", "x/y.py::t\n",
    "tests/test_a.py::u",
]  # fmt: skip
CTRF_IDS = [
    "t", "t[1]", "t[2]", "tests/test_a.py::t", "test_a.py::t", "app/tests/test_a.py::t",
    "tests/test_a.py::t[1]", "tests/test_a.py::t[2]", "sub/t", "a b", "x/y.py::t", "y.py::t",
    "src/a.test.js::t", "x.js::t", "a/tests/test_a.py::t", "tests/test_a.py::u",
]  # fmt: skip

case_sets = st.lists(
    st.tuples(st.sampled_from(JUNIT_IDS), st.sampled_from(["fail_to_pass", "pass_to_pass"])),
    min_size=1,
    max_size=6,
    unique_by=lambda pair: pair[0],
)


def whole_rows(reader, path: str, spec: TaskSpec):
    """The rows with every entry of the report kept (no filter)."""
    data = Path(path).read_bytes()
    if reader == "junit":
        report = junit_reader.parse_junit(data, path)
        match = trimmed_fallback(junit_reader.matcher, report.entries)
        return rows_for(
            spec, report.entries, match, source=path, passed_reruns=True, unnamed=report.nameless
        )
    report = ctrf_reader.parse_ctrf(data, path)
    match = trimmed_fallback(ctrf_reader.matcher, report.entries)
    return rows_for(spec, report.entries, match, source=path, unnamed=report.nameless)


def outcome(grade, *args):
    """What ``grade(*args)`` gives: its rows, or its refusal."""
    try:
        return grade(*args)
    except Ungradable as refused:
        return (refused.code, refused.why)


def same_rows(reader: str, path: str, spec: TaskSpec) -> None:
    """The rows of the reader, filtering from the first entry on (not after
    KEEP_ALL entries, as it does), are those of every entry kept."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(junit_reader, "KEEP_ALL", 0)
        patch.setattr(ctrf_reader, "KEEP_ALL", 0)
        filtered = outcome(read, reader, path, spec)
    assert filtered == outcome(whole_rows, reader, path, spec)


@pytest.mark.slow
@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(JUNIT_CLASSES),
            st.sampled_from(JUNIT_NAMES),
            st.sampled_from(JUNIT_BODIES),
        ),
        max_size=12,
    ),
    case_sets,
)
def test_junit_rows_are_the_same_with_only_the_matchable_entries_kept(
    tmp_path_factory, cases, declared
):
    body = "".join(
        f"<testcase classname={quoteattr(cls)} name={quoteattr(name)}>{result}</testcase>"
        for cls, name, result in cases
    )
    path = write(tmp_path_factory.mktemp("junit"), "r.xml", f"<testsuite>{body}</testsuite>")
    same_rows("junit", path, TaskSpec.of(dict(declared)))


@pytest.mark.slow
@settings(max_examples=300)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "name": st.sampled_from(CTRF_NAMES),
                "status": st.sampled_from(["passed", "failed", "skipped", "pending", "other"]),
            },
            optional={
                "filePath": st.sampled_from(["tests/test_a.py", "src/a.test.js", " x.js ", ""]),
                "tags": st.sampled_from([["xfail"], ["parametrize::n::[1, 2]"], 5, None]),
            },
        ),
        max_size=12,
    ),
    st.booleans(),
    st.lists(
        st.tuples(st.sampled_from(CTRF_IDS), st.sampled_from(["fail_to_pass", "pass_to_pass"])),
        min_size=1,
        max_size=6,
        unique_by=lambda pair: pair[0],
    ),
)
def test_ctrf_rows_are_the_same_with_only_the_matchable_entries_kept(
    tmp_path_factory, tests, legacy, declared
):
    document = {"results": {"tool": {"name": "pytest"}, "tests": tests}}
    if not legacy:
        document["reportFormat"] = "CTRF"
    path = write(tmp_path_factory.mktemp("ctrf"), "r.json", json.dumps(document))
    same_rows("ctrf", path, TaskSpec.of(dict(declared)))
