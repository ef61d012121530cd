"""Read every file of the shared evidence corpus and compare with its INDEX.

    .venv/bin/python infra/check_evidence.py ../shared/evidence

For each valid file, the counts our readers see (tests / passed / failed /
errored / skipped; for CTRF also pending and other) must equal the INDEX's,
except where we deliberately count otherwise (listed in DELIBERATE, with the
reason). Files the INDEX marks as a parse error, and files with no testcase
or not JUnit, must be refused. Exit 0 when everything agrees, 1 otherwise.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

from truereward.codes import Ungradable
from truereward.readers import read
from truereward.readers.ctrf import parse_ctrf
from truereward.readers.junit import parse_junit
from truereward.readers.outcomes import Outcome
from truereward.taskspec import TaskSpec

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

_ROW = re.compile(r"^\| `(?P<file>[^`]+)` \| [^|]* \| (?P<counts>[^|]+) \|")


def junit_counts(entries: list) -> tuple[int, ...]:
    seen = Counter(entry.outcome for entry in entries)
    skipped = seen[Outcome.SKIPPED] + seen[Outcome.XFAIL]
    return (len(entries), seen[Outcome.PASSED], seen[Outcome.FAILED], seen[Outcome.ERROR], skipped)


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
    for problem in problems:
        print(f"PROBLEM              {problem}")
    print(f"{checked} files checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(Path(sys.argv[1])))
