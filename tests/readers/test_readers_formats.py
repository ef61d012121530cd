"""The ctrf and junit readers on the shapes real tools write, and on bad
evidence: refused with a code, within bounded time and memory, never a
crash and never "0 of N"."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truereward import Ungradable, read
from truereward.readers.junit import parse_junit, pytest_node_id_parts


def write(tmp_path: Path, name: str, data: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


def refusal(reader: str, path: str, case_set: object = None) -> Ungradable:
    with pytest.raises(Ungradable) as caught:
        read(reader, path, case_set or {"a": "fail_to_pass"})
    return caught.value


# --- junit -------------------------------------------------------------------------------------

SUREFIRE_FLAKY = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="calc" tests="1" failures="0" errors="0">
  <testcase name="testAdd" classname="action.surefire.CalcTest" time="0.01">
    <flakyFailure message="boom" type="java.lang.AssertionError">first attempt</flakyFailure>
    <rerunFailure message="boom">second</rerunFailure>
  </testcase>
</testsuite>"""


def test_surefire_flaky_and_rerun_failures_on_a_passing_case_are_not_results(tmp_path):
    path = write(tmp_path, "surefire.xml", SUREFIRE_FLAKY)
    (row,) = read("junit", path, {"action.surefire.CalcTest.testAdd": "fail_to_pass"})
    assert row.verdict == "pass"


def test_precedence_error_over_failure_over_skipped(tmp_path):
    path = write(
        tmp_path,
        "multi.xml",
        """<testsuites><testsuite name="s">
      <testcase classname="c" name="a"><skipped/><failure/><error message="x"/></testcase>
      <testcase classname="c" name="b"><skipped/><failure message="f"/></testcase>
      <testcase classname="c" name="c"><skipped/></testcase>
      <testcase classname="c" name="d" status="disabled"/>
      <testcase classname="c" name="e"/>
    </testsuite></testsuites>""",
    )
    entries = {
        entry.label: entry.outcome.value for entry in parse_junit(Path(path).read_bytes()).entries
    }
    assert entries == {
        "c::a": "error",
        "c::b": "failed",
        "c::c": "skipped",
        "c::d": "skipped",
        "c::e": "passed",
    }


def test_nested_suites_are_walked_and_declared_totals_ignored(tmp_path):
    path = write(
        tmp_path,
        "nested.xml",
        """<testsuites tests="57" failures="9">
      <testsuite name="outer" tests="40"><testsuite name="inner">
        <testsuite name="deepest"><testcase classname="x" name="deep"/></testsuite>
      </testsuite><testcase classname="x" name="shallow"/></testsuite></testsuites>""",
    )
    assert len(parse_junit(Path(path).read_bytes()).entries) == 2


def test_a_bom_is_fine(tmp_path):
    path = write(
        tmp_path,
        "bom.xml",
        b"\xef\xbb\xbf<?xml version='1.0' encoding='utf-8'?>"
        b"<testsuite><testcase classname='c' name='t'/></testsuite>",
    )
    (row,) = read("junit", path, {"c.t": "fail_to_pass"})
    assert row.verdict == "pass"


def test_bare_names_and_classname_forms_match(tmp_path):
    path = write(
        tmp_path,
        "go.xml",
        """<testsuites><testsuite name="pkg">
      <testcase classname="github.com/x/pkg" name="TestFoo"/>
      <testcase classname="github.com/x/pkg" name="TestBar"><failure/></testcase>
      <testcase classname="crate" name="mod::test_inner"/>
    </testsuite></testsuites>""",
    )
    rows = {
        row.id: row.verdict
        for row in read(
            "junit",
            path,
            {
                "TestFoo": "fail_to_pass",
                "github.com/x/pkg.TestBar": "pass_to_pass",
                "github.com/x/pkg::TestFoo": "pass_to_pass",
                "crate::mod::test_inner": "fail_to_pass",
            },
        )
    }
    assert rows == {
        "TestFoo": "pass",
        "github.com/x/pkg.TestBar": "fail",
        "github.com/x/pkg::TestFoo": "pass",
        "crate::mod::test_inner": "pass",
    }


def test_an_ambiguous_match_is_case_invalid_never_a_guess(tmp_path):
    path = write(
        tmp_path,
        "two.xml",
        """<testsuites>
      <testsuite name="a"><testcase classname="pkg_a" name="test_same"/></testsuite>
      <testsuite name="b"><testcase classname="pkg_b" name="test_same"/></testsuite>
    </testsuites>""",
    )
    (row,) = read("junit", path, {"test_same": "fail_to_pass"})
    assert row.verdict == "ungradable"
    assert row.code == "CASE_INVALID"
    assert "ambiguous" in row.why


def test_a_node_id_matching_two_roots_is_ambiguous(tmp_path):
    path = write(
        tmp_path,
        "roots.xml",
        """<testsuite>
      <testcase classname="a.tests.test_x" name="test_y"/>
      <testcase classname="b.tests.test_x" name="test_y"><failure/></testcase>
    </testsuite>""",
    )
    (row,) = read("junit", path, {"tests/test_x.py::test_y": "fail_to_pass"})
    assert row.code == "CASE_INVALID"


def test_pytest_node_id_parts():
    assert pytest_node_id_parts("tests/test_app.py::TestX::test_y[2]") == (
        "tests.test_app.TestX",
        "test_y[2]",
    )
    assert pytest_node_id_parts("test_app.py::test_y[a::b]") == ("test_app", "test_y[a::b]")
    assert pytest_node_id_parts("pkg.Class::method") is None


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("<testsuites><testsuite name='s'>", "not well-formed"),
        ("<suites><suite><case name='x'/></suite></suites>", "not a JUnit report"),
        ("<testsuites tests='6' failures='1'><testsuite tests='6'/></testsuites>", "no <testcase>"),
        ("<testsuite><testcase classname='c'/></testsuite>", "has no name"),
        ("not xml at all", "not well-formed"),
        ("", "not well-formed"),
    ],
)
def test_bad_junit_is_evidence_malformed(tmp_path, content, why):
    error = refusal("junit", write(tmp_path, "bad.xml", content))
    assert error.code == "EVIDENCE_MALFORMED"
    assert why in error.why


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol">
<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
<!ENTITY lol9 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">]>
<testsuite><testcase classname="c" name="&lol9;"/></testsuite>"""

EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE x [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<testsuite><testcase classname="c" name="&secret;"/></testsuite>"""


@pytest.mark.parametrize("content", [BILLION_LAUGHS, EXTERNAL_ENTITY])
def test_entities_and_dtds_are_refused(tmp_path, content):
    error = refusal("junit", write(tmp_path, "evil.xml", content))
    assert error.code == "EVIDENCE_MALFORMED"
    assert "DTD" in error.why


def test_wrong_encoding_is_refused(tmp_path):
    data = (
        "<?xml version='1.0' encoding='UTF-8'?><testsuite><testcase classname='c' "
        "name='café'/></testsuite>"
    ).encode("latin-1")
    assert refusal("junit", write(tmp_path, "latin1.xml", data)).code == "EVIDENCE_MALFORMED"
    utf16 = "<testsuite><testcase classname='c' name='é'/></testsuite>".encode("utf-16")
    (row,) = read("junit", write(tmp_path, "utf16.xml", utf16), {"c.é": "fail_to_pass"})
    assert row.verdict == "pass"  # UTF-16 with its BOM is well-formed XML


# --- ctrf ---------------------------------------------------------------------------------------


def ctrf(tests: list, **top: object) -> str:
    return json.dumps({**top, "results": {"tool": {"name": "t"}, "summary": {}, "tests": tests}})


def test_legacy_shapes_suite_as_string_and_float_seconds(tmp_path):
    path = write(
        tmp_path,
        "legacy.json",
        ctrf(
            [
                {
                    "name": "checks the login",
                    "status": "passed",
                    "duration": 1.25,
                    "suite": "login.spec",
                },
                {
                    "name": "times out",
                    "status": "failed",
                    "rawStatus": "timedOut",
                    "duration": 30.0,
                },
            ]
        ),
    )
    rows = {
        row.id: row
        for row in read(
            "ctrf", path, {"checks the login": "fail_to_pass", "times out": "pass_to_pass"}
        )
    }
    assert rows["checks the login"].verdict == "pass"
    assert rows["checks the login"].measures["duration_ms"] == 1250.0
    assert rows["times out"].verdict == "fail"


def test_current_ctrf_statuses(tmp_path):
    path = write(
        tmp_path,
        "current.json",
        ctrf(
            [
                {"name": "p", "status": "pending", "duration": 0},
                {"name": "o", "status": "other", "duration": 0},
                {"name": "x", "status": "skipped", "rawStatus": "xfailed", "duration": 1},
            ],
            reportFormat="CTRF",
            specVersion="1.0.0",
        ),
    )
    rows = {
        row.id: row.verdict
        for row in read(
            "ctrf", path, {"p": "fail_to_pass", "o": "pass_to_pass", "x": "fail_to_pass"}
        )
    }
    assert rows == {"p": "fail", "o": "fail", "x": "pass"}


def test_file_path_qualified_ids_and_duplicates(tmp_path):
    path = write(
        tmp_path,
        "dup.json",
        ctrf(
            [
                {"name": "adds", "status": "passed", "duration": 1, "filePath": "math.test.js"},
                {"name": "adds", "status": "passed", "duration": 1, "filePath": "math.test.js"},
                {"name": "flips", "status": "passed", "duration": 1},
                {"name": "flips", "status": "failed", "duration": 1},
            ],
            reportFormat="CTRF",
            specVersion="1.0.0",
        ),
    )
    rows = {
        row.id: row
        for row in read(
            "ctrf", path, {"math.test.js::adds": "fail_to_pass", "flips": "fail_to_pass"}
        )
    }
    assert rows["math.test.js::adds"].verdict == "pass"  # listed twice, one outcome
    assert not rows["math.test.js::adds"].reruns
    # Passed, then failed: a passed test is not rerun, so no rerun explains it.
    assert rows["flips"].code == "CASE_INVALID"


MERGED_PARAM = {
    "name": "tests/test_app.py::test_param",
    "status": "failed",
    "raw_status": "call_failed",
    "duration": 0.004,
    "file_path": "tests/test_app.py",
}
PARAM_CASES = {
    "tests/test_app.py::test_param[1]": "pass_to_pass",
    "test_app.py::test_param[2]": "fail_to_pass",  # written from another root
    "tests/test_app.py::test_ok": "pass_to_pass",
}


@pytest.mark.parametrize("tags", [None, [], ["parametrize"], ["parametrize::n::[1, 2]"]])
def test_a_legacy_entry_without_params_stands_for_its_parametrised_cases(tmp_path, tags):
    merged = MERGED_PARAM if tags is None else {**MERGED_PARAM, "tags": tags}
    ok = {"name": "tests/test_app.py::test_ok", "status": "passed", "duration": 0.001}
    path = write(tmp_path, "legacy.json", ctrf([merged, ok]))
    rows = {row.id: row for row in read("ctrf", path, PARAM_CASES)}
    for case_id in ("tests/test_app.py::test_param[1]", "test_app.py::test_param[2]"):
        assert rows[case_id].code == "CASE_INVALID", rows[case_id].why
        assert "merged" in rows[case_id].why
    assert rows["tests/test_app.py::test_ok"].verdict == "pass"


def test_a_current_report_merges_nothing(tmp_path):
    path = write(tmp_path, "current.json", ctrf([MERGED_PARAM], reportFormat="CTRF"))
    rows = {row.id: row for row in read("ctrf", path, PARAM_CASES)}
    assert rows["tests/test_app.py::test_param[1]"].verdict == "fail"
    assert "absent" in rows["tests/test_app.py::test_param[1]"].why


def test_a_legacy_parametrised_case_in_the_report_is_read(tmp_path):
    tests = [
        {**MERGED_PARAM, "name": "tests/test_app.py::test_param[1]", "status": "passed"},
        {"name": "tests/test_app.py::test_other", "status": "passed", "duration": 0.001},
    ]
    path = write(tmp_path, "legacy.json", ctrf(tests))
    case_set = {
        "tests/test_app.py::test_param[1]": "fail_to_pass",
        "tests/test_app.py::test_param[2]": "pass_to_pass",
        "tests/test_app.py::test_other[1]": "pass_to_pass",
    }
    rows = {row.id: row for row in read("ctrf", path, case_set)}
    assert rows["tests/test_app.py::test_param[1]"].verdict == "pass"
    assert rows["tests/test_app.py::test_param[2]"].verdict == "fail"  # no bare entry: absent
    assert rows["tests/test_app.py::test_other[1]"].code == "CASE_INVALID"


def junit_and_ctrf(tmp_path: Path, node_ids: list[str]) -> dict[str, str]:
    """The same passing tests written by pytest from the project root as
    JUnit XML and as CTRF."""
    parts = [pytest_node_id_parts(node_id) or ("", node_id) for node_id in node_ids]
    cases = "".join(f'<testcase classname="{cls}" name="{name}"/>' for cls, name in parts)
    tests = [{"name": node_id, "status": "passed", "duration": 1} for node_id in node_ids]
    return {
        "junit": write(tmp_path, "root.xml", f"<testsuite>{cases}</testsuite>"),
        "ctrf": write(tmp_path, "root.json", ctrf(tests, reportFormat="CTRF")),
    }


@pytest.mark.parametrize("reader", ["junit", "ctrf"])
def test_a_node_id_of_a_root_file_matches_across_root_directories(tmp_path, reader):
    paths = junit_and_ctrf(tmp_path, ["tests/test_app.py::test_ok", "tests/test_app.py::test_y"])
    (row,) = read(reader, paths[reader], {"test_app.py::test_ok": "fail_to_pass"})
    assert row.verdict == "pass", row.why


@pytest.mark.parametrize("reader", ["junit", "ctrf"])
def test_a_root_file_node_id_matching_two_directories_is_ambiguous(tmp_path, reader):
    paths = junit_and_ctrf(
        tmp_path, ["tests/test_a.py::test_same", "tests/sub/test_a.py::test_same"]
    )
    (row,) = read(reader, paths[reader], {"test_a.py::test_same": "fail_to_pass"})
    assert row.code == "CASE_INVALID"
    assert "matches 2 different tests" in row.why


def test_a_bare_ctrf_name_is_not_matched_by_suffix(tmp_path):
    path = write(tmp_path, "go.json", ctrf([{"name": "TestA/sub", "status": "passed"}]))
    (row,) = read("ctrf", path, {"sub": "fail_to_pass"})
    assert row.verdict == "fail"
    assert "absent" in row.why


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("{", "not JSON"),
        ("[]", "not a CTRF report"),
        ('{"results": {}}', "no results.tests"),
        (ctrf([], reportFormat="CTRF"), "no test"),
        (ctrf([{"name": "a", "status": "error"}]), "not one of"),
        (ctrf([{"status": "passed"}]), "non-empty name"),
        (ctrf([{"name": "a", "status": "passed"}], reportFormat="JUnit"), "reportFormat"),
        ('{"results": {"tests": [{"name": "a", "status": "passed", "duration": NaN}]}}', "NaN"),
    ],
)
def test_bad_ctrf_is_evidence_malformed(tmp_path, content, why):
    error = refusal("ctrf", write(tmp_path, "bad.json", content))
    assert error.code == "EVIDENCE_MALFORMED"
    assert why in error.why


def test_binary_and_oversized_evidence_is_refused(tmp_path):
    from truereward.readers import Evidence

    binary = write(tmp_path, "binary.json", bytes(range(256)) * 64)
    assert refusal("ctrf", binary).code == "EVIDENCE_MALFORMED"
    big = write(tmp_path, "big.json", ctrf([{"name": "a", "status": "passed"}] * 500))
    with pytest.raises(Ungradable) as caught:
        read("ctrf", Evidence(url=big, max_bytes=1000), {"a": "fail_to_pass"})
    assert caught.value.code == "EVIDENCE_MALFORMED"
    assert "more than" in caught.value.why


def test_a_directory_is_not_a_report(tmp_path):
    assert refusal("ctrf", str(tmp_path)).code == "EVIDENCE_MALFORMED"


@pytest.mark.slow
@pytest.mark.parametrize("reader", ["junit", "ctrf"])
def test_huge_and_deep_evidence_is_refused_in_bounded_time_and_memory(tmp_path, reader):
    """A 60 MB file and a deeply nested document, read in a fresh process
    whose peak memory is measured; the timeout bounds the time."""
    deep = write(
        tmp_path,
        "deep",
        "<testsuite>" * 200_000
        if reader == "junit"
        else '{"results": ' + "[" * 200_000 + "]" * 200_000 + "}",
    )
    huge = write(
        tmp_path,
        "huge",
        b"<testsuite>" + b" " * (60 << 20)
        if reader == "junit"
        else b'{"results": {"tests": [' + b" " * (60 << 20),
    )
    # VmHWM: the peak of this process's own memory (ru_maxrss would start at
    # the peak of the pytest worker it was spawned from: exec keeps it).
    script = textwrap.dedent(f"""
        from truereward import read, Ungradable
        codes = []
        for path in ({deep!r}, {huge!r}):
            try:
                read({reader!r}, path, {{"a": "fail_to_pass"}})
                codes.append("read")
            except Ungradable as error:
                codes.append(error.code)
        status = open("/proc/self/status").read()
        peak = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))
        print(" ".join(codes), peak)
    """)
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    *codes, peak_kb = result.stdout.split()
    assert codes == ["EVIDENCE_MALFORMED", "EVIDENCE_MALFORMED"]
    assert int(peak_kb) < 600 * 1024  # the 60 MB file and its parse, no more


# --- fuzzing --------------------------------------------------------------------------------


@settings(max_examples=150)
@given(st.binary(max_size=2000) | st.text(max_size=500).map(str.encode))
def test_garbage_raises_nothing_but_ungradable(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("fuzz") / "evidence"
    path.write_bytes(data)
    for reader in ("junit", "ctrf", "figure", "rows"):
        with contextlib.suppress(Ungradable):
            read(reader, str(path), {"a": "fail_to_pass"})
    # the state reader takes a directory: a file there is malformed evidence
    with pytest.raises(Ungradable) as caught:
        read(
            "state",
            str(path),
            {"cases": [{"id": "a", "kind": "fail_to_pass", "options": {"path": "out/x"}}]},
        )
    assert caught.value.code == "EVIDENCE_MALFORMED"


xml_fragments = st.lists(
    st.sampled_from(
        [
            "<testsuites>",
            "</testsuites>",
            "<testsuite>",
            "</testsuite>",
            "<testcase name='a'>",
            "<testcase classname='c' name='b'/>",
            "</testcase>",
            "<failure/>",
            "<error message='e'/>",
            "<skipped type='pytest.xfail'/>",
            "<skipped/>",
            "&amp;",
            "<![CDATA[x]]>",
            "text",
            "<testcase/>",
            "<flakyFailure/>",
            "<properties><property name='skipped' value='1'/>",
        ]
    ),
    max_size=20,
).map("".join)


@settings(max_examples=200)
@given(xml_fragments)
def test_junit_shaped_garbage_raises_nothing_but_ungradable(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "junit.xml"
    path.write_text(text)
    try:
        rows = read("junit", str(path), {"c.b": "fail_to_pass", "a": "pass_to_pass"})
    except Ungradable:
        return
    assert len(rows) == 2


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["name", "status", "tests", "results", "tags", "rawStatus", "duration", "suite"]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=200)
@given(json_values)
def test_ctrf_shaped_garbage_raises_nothing_but_ungradable(tmp_path_factory, value):
    path = tmp_path_factory.mktemp("fuzz") / "ctrf.json"
    path.write_text(json.dumps({"results": {"tests": value}}))
    try:
        rows = read("ctrf", str(path), {"a": "fail_to_pass"})
    except Ungradable:
        return
    assert len(rows) == 1
