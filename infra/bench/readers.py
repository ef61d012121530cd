"""Readers: the junit reader against junitparser on the 808-case Surefire
report of the evidence corpus, and read + fold + document throughput for a
20-case CTRF report; measured alternately in one run.

    .venv/bin/python infra/bench/readers.py [--quick] [--surefire PATH]

1. junit: ``truereward.readers.junit.parse_junit`` (defusedxml, every
   ``<testcase>`` to an outcome) against junitparser parsing the same bytes
   and counting its cases by result. Target: ratio (junitparser time / ours)
   >= 1.0. PATH defaults to the corpus beside the clone
   (``../shared/evidence/junit/maven-surefire__apache-pulsar.xml``).
2. ctrf: runs per second of ``read`` + ``grade_document`` for a 20-case
   CTRF report written by pytest-json-ctrf, against the bare
   ``json.loads`` of the same file (the floor any reader pays).
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import truereward
from truereward.readers.junit import parse_junit

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SUREFIRE = ROOT.parent / "shared/evidence/junit/maven-surefire__apache-pulsar.xml"


def alternate(
    first: Callable[[], object], second: Callable[[], object], number: int, rounds: int
) -> tuple[float, float]:
    mine, theirs = [], []
    for _ in range(rounds):
        for fn, out in ((first, mine), (second, theirs)):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            out.append((time.perf_counter() - start) / number)
    return statistics.median(mine), statistics.median(theirs)


def junitparser_count(data: bytes) -> Counter[str]:
    from junitparser import Error, Failure, JUnitXml, Skipped

    xml = JUnitXml.fromfile(io.BytesIO(data))
    counts: Counter[str] = Counter()

    def walk(suite: object) -> None:
        for item in suite:  # type: ignore[attr-defined]
            if hasattr(item, "result") and hasattr(item, "classname"):
                results = item.result
                if any(isinstance(r, Error) for r in results):
                    counts["error"] += 1
                elif any(isinstance(r, Failure) for r in results):
                    counts["failure"] += 1
                elif any(isinstance(r, Skipped) for r in results):
                    counts["skipped"] += 1
                else:
                    counts["passed"] += 1
            else:
                walk(item)

    walk(xml)
    return counts


def synthetic_surefire() -> bytes:
    """808 cases in 176 suites: 793 passed, 1 failure, 14 skipped."""
    parts = ['<?xml version="1.0" encoding="UTF-8"?><testsuites>']
    number = 0
    for suite in range(176):
        parts.append(f'<testsuite name="org.apache.pulsar.Suite{suite}" tests="5">')
        for _ in range(5 if suite < 104 else 4):
            if number == 808:
                break
            body = (
                "<failure message='x'>trace</failure>"
                if number == 7
                else ("<skipped/>" if number % 57 == 3 and number < 800 else "")
            )
            parts.append(
                f'<testcase name="test{number}" classname="org.apache.pulsar.Suite'
                f'{suite}" time="0.01">{body}<system-out>log</system-out></testcase>'
            )
            number += 1
        parts.append("</testsuite>")
    parts.append("</testsuites>")
    return "".join(parts).encode()


def ours_count(data: bytes) -> Counter[str]:
    return Counter(entry.reported for entry in parse_junit(data).entries)


def ctrf_report(where: Path) -> Path:
    tests = [
        {
            "name": f"tests/test_m.py::test_{i}",
            "status": "failed" if i == 7 else "passed",
            "duration": 12,
            "suite": ["tests/test_m.py"],
            "filePath": "tests/test_m.py",
        }
        for i in range(20)
    ]
    path = where / "ctrf.json"
    path.write_text(
        json.dumps(
            {
                "reportFormat": "CTRF",
                "specVersion": "1.0.0",
                "results": {
                    "tool": {"name": "pytest"},
                    "summary": {
                        "tests": 20,
                        "passed": 19,
                        "failed": 1,
                        "skipped": 0,
                        "pending": 0,
                        "other": 0,
                        "start": 0,
                        "stop": 1,
                    },
                    "tests": tests,
                },
            }
        )
    )
    return path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--surefire", type=Path, default=DEFAULT_SUREFIRE)
    args = parser.parse_args()
    number, rounds = (5, 3) if args.quick else (40, 9)

    if args.surefire.exists():
        data = args.surefire.read_bytes()
    else:  # no corpus beside the clone: a report of the same shape and counts
        print(f"{args.surefire} is not there; using a generated Surefire-shaped report")
        data = synthetic_surefire()
    assert ours_count(data) == Counter({"passed": 793, "skipped": 14, "failure": 1}), ours_count(
        data
    )
    assert sum(junitparser_count(data).values()) == 808
    ours, theirs = alternate(
        lambda: ours_count(data), lambda: junitparser_count(data), number, rounds
    )
    print(
        f"junit, {args.surefire.name} (808 cases): ours {ours * 1e3:.2f} ms, junitparser "
        f"{theirs * 1e3:.2f} ms"
    )
    print(f"RATIO readers junit_vs_junitparser={theirs / ours:.2f} (target >= 1.0)")

    where = ROOT / ".bench"
    where.mkdir(exist_ok=True)
    report = ctrf_report(where)
    case_set = {
        f"tests/test_m.py::test_{i}": "fail_to_pass" if i < 5 else "pass_to_pass" for i in range(20)
    }
    spec = truereward.TaskSpec.of(case_set)

    def grade() -> object:
        rows = truereward.read("ctrf", str(report), spec)
        return truereward.grade_document(rows, case_set=spec)

    raw = report.read_bytes()
    assert grade().reward == 0.0  # type: ignore[attr-defined]
    ours, floor = alternate(grade, lambda: json.loads(raw), number * 20, rounds)
    print(
        f"ctrf, 20 cases: read + fold + document {1 / ours:.0f} runs/s "
        f"({ours * 1e6:.0f} us/run); json.loads alone {1 / floor:.0f} /s"
    )
    print(f"RATIO readers ctrf_runs_per_second={1 / ours:.0f} vs_json_loads={floor / ours:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
