"""Read every file of the shared evidence corpus and compare with its INDEX;
then grade the hand-written report shapes of tests/data/shapes.

    .venv/bin/python infra/check_evidence.py ../shared/evidence

For each valid file, the counts our readers see (tests / passed / failed /
errored / skipped; for CTRF also pending and other) must equal the INDEX's,
except where we deliberately count otherwise (listed in DELIBERATE, with the
reason). Files the INDEX marks as a parse error, and files with no testcase
or not JUnit, must be refused.

The shapes (tests/data/shapes/EXPECTED.json says what each file is and how
each of its declared cases must be graded) are the ones an external
comparison of the readers found: a nameless test among good ones, CTRF
tags that are not a list, names with surrounding whitespace, a legacy
pytest-json-ctrf xfail written as a skip. Each is graded through the public
reader, and its digest checked against the file's bytes.

Exit 0 when everything agrees, 1 otherwise.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

from truereward.codes import Ungradable
from truereward.readers import Evidence, read, read_with_evidence
from truereward.readers.ctrf import parse_ctrf
from truereward.readers.junit import parse_junit
from truereward.readers.outcomes import ReportedOutcome
from truereward.record.taskspec import TaskSpec

#: Files where our counts differ from the INDEX on purpose: file -> (our
#: tests/passed/failed/errored/skipped, why).
DELIBERATE = {
    "junit/tst__disabled.xml": (
        (31, 6, 19, 1, 5),
        "5 cases carry status='disabled' and no <skipped>: they did not run, so we count them "
        "skipped (as EnricoMi's expected result does); junitparser counts them passed",
    ),
}

#: Files that must be refused although the INDEX gives counts: file -> why.
MUST_REFUSE = {
    "junit/edge__no-cases-but-tests.xml": "no <testcase>: declared totals are not results",
}

#: The hand-written shapes, beside the tests.
SHAPES = Path(__file__).resolve().parents[1] / "tests" / "data" / "shapes"

_ROW = re.compile(r"^\| `(?P<file>[^`]+)` \| [^|]* \| (?P<counts>[^|]+) \|")


def junit_counts(entries: list) -> tuple[int, ...]:
    seen = Counter(entry.outcome for entry in entries)
    skipped = seen[ReportedOutcome.SKIPPED] + seen[ReportedOutcome.XFAIL]
    return (
        len(entries),
        seen[ReportedOutcome.PASSED],
        seen[ReportedOutcome.FAILED],
        seen[ReportedOutcome.ERROR],
        skipped,
    )


def read_whole(path: Path, name: str, entries: list) -> list[str]:
    """Grade the file through the public reader with a case set of its own
    tests: one row per case, each matched to its entry (or refused as
    ambiguous when the report names two tests alike)."""
    labels = sorted({entry.label for entry in entries})
    spec = TaskSpec.of([{"id": label, "kind": "pass_to_pass"} for label in labels])
    reader = "junit" if name.startswith("junit/") else "ctrf"
    rows = read(reader, str(path), spec)
    problems = []
    if [row.id for row in rows] != labels:
        problems.append(f"{name}: read() gave rows for other cases than its tests")
    absent = [row.id for row in rows if row.why.startswith("absent")]
    if absent:
        problems.append(f"{name}: read() did not find its own tests {absent[:3]}")
    return problems


def check_shapes(directory: Path = SHAPES) -> tuple[int, list[str]]:
    """Grade each file of ``directory`` as its EXPECTED.json says; the
    number of files checked and the problems found."""
    expected = json.loads((directory / "EXPECTED.json").read_text(encoding="utf-8"))
    problems: list[str] = []
    for name, shape in expected.items():
        path = directory / name
        case_set = {case_id: case["kind"] for case_id, case in shape["cases"].items()}
        source = Evidence(url=str(path))
        data = path.read_bytes()
        try:
            reading = read_with_evidence(shape["reader"], source, case_set)
        except Ungradable as refusal:
            if refusal.code != shape.get("refused") or shape.get("why", "") not in refusal.why:
                problems.append(f"shape {name}: refused ({refusal}), expected {shape}")
            else:
                print(f"refused as expected  shape {name}: {refusal.code}")
        else:
            if "refused" in shape:
                problems.append(f"shape {name}: read, but it must be refused ({shape['refused']})")
            rows = {row.id: row for row in reading.rows}
            for case_id, case in shape["cases"].items():
                row = rows[case_id]
                got = (row.verdict, row.code)
                want = (case["verdict"], case.get("code", ""))
                if got != want or case.get("why", "") not in row.why:
                    problems.append(
                        f"shape {name}: {case_id} is {got} ({row.why!r}), expected {case}"
                    )
            if not any(problem.startswith(f"shape {name}:") for problem in problems):
                print(f"graded as expected   shape {name}: {len(rows)} cases")
        digests = [(digest.sha256, digest.size) for digest in source.digests]
        if digests != [(hashlib.sha256(data).hexdigest(), len(data))]:
            problems.append(f"shape {name}: the recorded digest {digests} is not the file's")
    on_disk = {path.name for path in directory.iterdir() if path.suffix in (".xml", ".json")}
    for missing in sorted(on_disk - set(expected) - {"EXPECTED.json"}):
        problems.append(f"shape {missing}: on disk but not in EXPECTED.json (not checked)")
    return len(expected), problems


def main(corpus: Path) -> int:
    index = (corpus / "INDEX.md").read_text(encoding="utf-8")
    problems: list[str] = []
    checked = 0
    listed: set[str] = set()
    for line in index.splitlines():
        match = _ROW.match(line)
        if not match:
            continue
        name, counts = match.group("file"), match.group("counts").strip()
        listed.add(name)
        path = corpus / name
        data = path.read_bytes()
        parse = parse_junit if name.startswith("junit/") else parse_ctrf
        try:
            report = parse(data, name)
        except Ungradable as refusal:
            if counts.startswith("PARSE ERROR") or name in MUST_REFUSE:
                print(f"refused as expected  {name}: {refusal.code}")
                checked += 1
            else:
                problems.append(f"{name}: refused ({refusal}) but the INDEX counts {counts}")
            continue
        if counts.startswith("PARSE ERROR") or name in MUST_REFUSE:
            problems.append(f"{name}: read, but it must be refused ({counts})")
            continue
        numbers = [int(n) if n.strip().isdigit() else None for n in counts.split("(")[0].split("/")]
        if name.startswith("junit/"):
            ours = junit_counts(report.entries)
            expected = tuple(numbers)
            if name in DELIBERATE:
                expected, why = DELIBERATE[name]
                print(f"deliberate           {name}: {why}")
        else:
            statuses = Counter(entry.reported for entry in report.entries)
            ours = (
                len(report.entries),
                statuses["passed"],
                statuses["failed"],
                None,
                statuses["skipped"],
            )
            expected = tuple(numbers)
            extra = re.search(r"pending (\d+), other (\d+)", counts)
            if extra and (statuses["pending"], statuses["other"]) != tuple(
                map(int, extra.groups())
            ):
                problems.append(
                    f"{name}: pending/other {statuses['pending']}/{statuses['other']}"
                    f" vs INDEX {extra.groups()}"
                )
        if tuple(ours) != tuple(expected):
            problems.append(f"{name}: ours {ours} vs INDEX {expected}")
        else:
            print(f"agrees               {name}: {ours}")
        problems += read_whole(path, name, report.entries)
        checked += 1
    on_disk = {
        str(path.relative_to(corpus))
        for path in corpus.rglob("*")
        if path.is_file() and path.suffix in (".xml", ".json") and path.name != "ctrf.schema.json"
    }
    for missing in sorted(on_disk - listed):
        problems.append(f"{missing}: on disk but not in the INDEX (not checked)")
    shapes, shape_problems = check_shapes()
    checked += shapes
    problems += shape_problems
    for problem in problems:
        print(f"PROBLEM              {problem}")
    print(f"{checked} files checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1])))
