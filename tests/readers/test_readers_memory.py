"""The memory budget of the test-report readers: a JUnit file of 1.7
million testcases (about 60 MB) and a CTRF report of a million tests are
each graded in a fresh process whose peak resident memory must stay under
300 MB (it was 1.1 GB and 620 MB when they were parsed whole), and the
grade must be right.

The peak is ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` taken, once
the grading process has exited, in a small launcher process whose only
child it is. Measured from this pytest worker directly it would not be the
grader's own: on Linux a process's ``ru_maxrss`` starts at the peak of the
process it was spawned from (exec records the replaced address space's
high-water mark), and a pytest worker may have grown past the budget on
other tests. The launcher is small, so what the grader inherits from it is
small. The grader also reports its own ``VmHWM`` (the high-water mark of
its own address space), which must agree.

The reports are written in chunks of formatted lines, every test named
differently; the declared cases lie at the start, the middle and the end.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

#: Peak resident memory allowed to the process that grades one report.
BUDGET_MB = 300

GRADE = textwrap.dedent("""
    import json, sys
    from truereward import grade_evidence
    reader, path, case_set = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    document = grade_evidence(reader, path, case_set)
    (digest,) = document.evidence
    with open("/proc/self/status") as status:
        hwm = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    print(json.dumps({
        "gradable": document.gradable,
        "reward": document.reward,
        "refusals": [refusal.code for refusal in document.refusals],
        "whys": [refusal.why for refusal in document.refusals],
        "rows": {row.id: [row.verdict, row.why] for row in document.detail},
        "sha256": digest.sha256,
        "size": digest.size,
        "vmhwm_kb": hwm,
    }))
""")

LAUNCH = textwrap.dedent("""
    import json, resource, subprocess, sys
    graded = subprocess.run([sys.executable, "-c", *sys.argv[1:]], capture_output=True)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    sys.stderr.buffer.write(graded.stderr)
    print(json.dumps({"returncode": graded.returncode, "peak_kb": peak_kb}))
    sys.stdout.flush()
    sys.stdout.buffer.write(graded.stdout)
""")


def run_and_measure(reader: str, path: Path, case_set: dict[str, str]) -> tuple[dict, float]:
    """The grade a fresh process gives ``path``, and that process's peak
    resident memory in MB (module docstring)."""
    launched = subprocess.run(
        [sys.executable, "-c", LAUNCH, GRADE, reader, str(path), json.dumps(case_set)],
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert launched.returncode == 0, launched.stderr.decode()[-3000:]
    measured, _, graded = launched.stdout.partition(b"\n")
    outcome = json.loads(measured)
    assert outcome["returncode"] == 0, launched.stderr.decode()[-3000:]
    grade = json.loads(graded)
    peak_mb = outcome["peak_kb"] / 1024  # Linux: kilobytes
    print(f"{reader}: peak RSS {peak_mb:.0f} MB (VmHWM {grade['vmhwm_kb'] / 1024:.0f} MB)")
    assert grade["vmhwm_kb"] / 1024 <= peak_mb + 1
    return grade, peak_mb


def write_chunks(
    path: Path, head: bytes, line: bytes, count: int, tail: bytes, sep: bytes = b""
) -> None:
    """``head``, then ``line % i`` for i in 0..count-1 joined by ``sep``,
    then ``tail``, written 100,000 lines at a time."""
    with path.open("wb") as out:
        out.write(head)
        for start in range(0, count, 100_000):
            chunk = sep.join(line % i for i in range(start, min(start + 100_000, count)))
            out.write(chunk if start == 0 else sep + chunk)
        out.write(tail)


@pytest.mark.slow
def test_a_junit_file_of_1_7_million_testcases_grades_under_the_budget(tmp_path):
    path = tmp_path / "junit.xml"
    count = 1_700_000
    write_chunks(
        path,
        b'<?xml version="1.0" encoding="UTF-8"?>\n<testsuites><testsuite name="pkg.big">\n'
        # the declared cases: a failure and a skip among passes
        b'<testcase classname="pkg.first" name="test_fails" time="0.1">'
        b'<failure message="assert 1 == 2">AssertionError</failure></testcase>\n'
        b'<testcase classname="pkg.first" name="test_skipped"><skipped/></testcase>\n',
        b'<testcase name="t%07d" time="1"/>',  # 36 bytes
        count,
        b'<testcase classname="pkg.last" name="test_final" time="0.2"/>\n'
        b"</testsuite></testsuites>\n",
    )
    size = path.stat().st_size
    assert 55 << 20 < size < 64 << 20  # about 60 MB, under the evidence limit
    case_set = {
        "t0000000": "fail_to_pass",  # a bare name (Go and friends write no classname)
        "t0850000": "fail_to_pass",  # the middle one
        "t1699999": "pass_to_pass",  # the last one
        "tests/pkg/last.py::test_final": "pass_to_pass",  # by node id, from another root
        "pkg.first.test_skipped": "pass_to_pass",
        "pkg.first.test_fails": "fail_to_pass",
        "t9999999": "pass_to_pass",  # not in the report
    }
    grade, peak_mb = run_and_measure("junit", path, case_set)
    assert peak_mb < BUDGET_MB, f"peak RSS {peak_mb:.0f} MB"
    assert grade["refusals"] == [] and grade["gradable"]
    verdicts = {case_id: verdict for case_id, (verdict, _) in grade["rows"].items()}
    assert verdicts == {
        "t0000000": "pass",
        "t0850000": "pass",
        "t1699999": "pass",
        "tests/pkg/last.py::test_final": "pass",
        "pkg.first.test_skipped": "pass",
        "pkg.first.test_fails": "fail",
        "t9999999": "fail",
    }
    assert "assert 1 == 2" in grade["rows"]["pkg.first.test_fails"][1]
    assert grade["size"] == size
    assert grade["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_a_ctrf_report_of_a_million_tests_grades_under_the_budget(tmp_path):
    path = tmp_path / "ctrf.json"
    count = 1_000_000
    write_chunks(
        path,
        b'{"reportFormat": "CTRF", "specVersion": "1.0.0", "results": {'
        b'"tool": {"name": "pytest"}, "summary": {"tests": 1000002, "passed": 1000000, '
        b'"failed": 1, "skipped": 1, "pending": 0, "other": 0, "start": 0, "stop": 1}, '
        b'"tests": [{"name": "tests/test_a.py::test_fails", "status": "failed", "duration": 3, '
        b'"message": "assert 1 == 2", "filePath": "tests/test_a.py"}, '
        b'{"name": "tests/test_a.py::test_xfail", "status": "skipped", "rawStatus": "xfailed"},\n',
        b'{"name":"t/m.py::test_%06d","status":"passed","duration":1}',
        count,
        b"\n]}}\n",
        sep=b",\n",
    )
    size = path.stat().st_size
    assert 50 << 20 < size < 64 << 20
    case_set = {
        "t/m.py::test_000000": "fail_to_pass",
        "m.py::test_500000": "fail_to_pass",  # written from another root directory
        "src/t/m.py::test_999999": "pass_to_pass",  # the other way round
        "tests/test_a.py::test_fails": "pass_to_pass",
        "test_a.py::test_xfail": "fail_to_pass",
        "t/m.py::test_1000000": "pass_to_pass",  # not in the report
    }
    grade, peak_mb = run_and_measure("ctrf", path, case_set)
    assert peak_mb < BUDGET_MB, f"peak RSS {peak_mb:.0f} MB"
    assert grade["refusals"] == [] and grade["gradable"]
    verdicts = {case_id: verdict for case_id, (verdict, _) in grade["rows"].items()}
    assert verdicts == {
        "t/m.py::test_000000": "pass",
        "m.py::test_500000": "pass",
        "src/t/m.py::test_999999": "pass",
        "tests/test_a.py::test_fails": "fail",
        "test_a.py::test_xfail": "pass",
        "t/m.py::test_1000000": "fail",
    }
    assert "absent" in grade["rows"]["t/m.py::test_1000000"][1]
    assert grade["size"] == size
    assert grade["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


# One huge token, and one test listed over and over -----------------------------

MIB = 1 << 20


def refused_quickly(reader: str, path: Path, case_set: dict[str, str]) -> tuple[str, float]:
    """The one refusal a fresh process gives ``path``, checked to come in
    seconds and under the budget; its reason."""
    started = time.monotonic()
    grade, peak_mb = run_and_measure(reader, path, case_set)
    seconds = time.monotonic() - started
    assert peak_mb < BUDGET_MB, f"peak RSS {peak_mb:.0f} MB"
    assert seconds < 30, seconds
    assert grade["gradable"] is False and grade["refusals"] == ["EVIDENCE_MALFORMED"]
    assert grade["size"] == path.stat().st_size  # read to its end: the digest is the file's
    (why,) = grade["whys"]
    return why, peak_mb


HUGE = {
    # 63 MiB in one attribute; with one four-byte character, Python would
    # hold its text at four bytes a character.
    "junit-name": (
        "junit",
        b'<testsuites><testsuite><testcase name="',
        b'"/></testsuite></testsuites>',
    ),
    "junit-name-wide": (
        "junit",
        '<testsuites><testsuite><testcase name="\U0001f600'.encode(),
        b'"/></testsuite></testsuites>',
    ),
    "junit-message": (
        "junit",
        b'<testsuites><testsuite><testcase name="t"><failure message="',
        b'"/></testcase></testsuite></testsuites>',
    ),
    "junit-comment": ("junit", b"<testsuites><testsuite><!--", b"--></testsuite></testsuites>"),
    "ctrf-name": ("ctrf", b'{"results": {"tests": [{"status": "passed", "name": "', b'"}]}}'),
    "ctrf-name-wide": (
        "ctrf",
        '{"results": {"tests": [{"status": "passed", "name": "\U0001f600'.encode(),
        b'"}]}}',
    ),
    "ctrf-skipped-field": (
        "ctrf",
        b'{"results": {"tests": [{"name": "t", "status": "passed", "stdout": "',
        b'"}]}}',
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("shape", list(HUGE))
def test_a_63_mib_attribute_or_string_is_refused_under_the_budget(
    tmp_path: Path, shape: str
) -> None:
    from truereward.readers.junit import MAX_MARKUP
    from truereward.readers.streamjson import MAX_STRING

    reader, head, tail = HUGE[shape]
    path = tmp_path / "report"
    with path.open("wb") as out:
        out.write(head)
        for _ in range(63):
            out.write(b"x" * MIB)
        out.write(tail)
    why, peak_mb = refused_quickly(reader, path, {"t": "fail_to_pass"})
    print(f"{shape}: peak {peak_mb:.0f} MB: {why}")
    bound = MAX_MARKUP if reader == "junit" else MAX_STRING
    assert f"{bound} bytes" in why


@pytest.mark.slow
@pytest.mark.parametrize("reader", ["junit", "ctrf"])
def test_a_declared_test_listed_a_million_times_is_refused_under_the_budget(
    tmp_path: Path, reader: str
) -> None:
    """Every entry matches a declared case, so every one would be kept: a
    report may keep only so many (matching.MAX_KEPT)."""
    path = tmp_path / "report"
    if reader == "junit":
        head, line, tail = (
            b"<testsuites><testsuite>",
            b'<testcase name="t0" n="%d"/>',
            b"</testsuite></testsuites>",
        )
        write_chunks(path, head, line, 1_700_000, tail)
    else:
        head, line, tail = (
            b'{"results": {"tests": [',
            b'{"name": "t0", "status": "passed", "n": %d}',
            b"]}}",
        )
        write_chunks(path, head, line, 1_000_000, tail, sep=b",")
    why, peak_mb = refused_quickly(reader, path, {"t0": "fail_to_pass"})
    print(f"{reader}: peak {peak_mb:.0f} MB: {why}")
    assert "more of its tests can be declared cases than a report may keep" in why


def test_markup_and_strings_under_the_bound_are_read(tmp_path: Path) -> None:
    """A 3 MiB failure message (under the 4 MiB bound) is read, cut to what
    a row keeps; a name over 1024 characters is left out like a nameless test."""
    from truereward import read

    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite><testcase name="t"><failure message="'
        + "m" * (3 * MIB)
        + '"/></testcase><testcase name="'
        + "n" * 1025
        + '"/></testsuite></testsuites>'
    )
    ctrf = tmp_path / "ctrf.json"
    ctrf.write_text(
        json.dumps(
            {
                "results": {
                    "tests": [
                        {"name": "t", "status": "failed", "message": "m" * (3 * MIB)},
                        {"name": "n" * 1025, "status": "passed"},
                    ]
                }
            }
        )
    )
    for reader, path in (("junit", junit), ("ctrf", ctrf)):
        found = read(reader, str(path), {"t": "fail_to_pass", "u": "pass_to_pass"})
        rows = {row.id: row for row in found}
        assert rows["t"].verdict == "fail" and len(rows["t"].why) < 600, reader
        assert rows["u"].verdict == "fail"
        assert "1 test without a name or with one over 1024 characters" in rows["u"].why


@pytest.mark.slow
def test_a_skipped_object_of_millions_of_keys_is_refused_under_the_budget(tmp_path: Path) -> None:
    """A field the reader skips is still checked for duplicate keys, which
    means holding the keys: at most streamjson.MAX_SKIPPED_KEYS at once
    (millions of distinct keys peaked at 478 MB before)."""
    from truereward.readers.streamjson import MAX_SKIPPED_KEYS

    path = tmp_path / "report"
    write_chunks(
        path,
        b'{"results": {"tests": [{"name": "t", "status": "passed", "extra": {',
        b'"k%d": 0',
        4_000_000,
        b"}}]}}",
        sep=b",",
    )
    why, peak_mb = refused_quickly("ctrf", path, {"t": "fail_to_pass"})
    print(f"ctrf-keys: peak {peak_mb:.0f} MB: {why}")
    assert f"more than {MAX_SKIPPED_KEYS} keys" in why
