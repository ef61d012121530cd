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
