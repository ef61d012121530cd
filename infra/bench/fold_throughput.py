"""Validate + fold + grade document for a 20-case run: truereward against
truereward 0.4.0, measured alternately in one process.

    .venv/bin/python infra/bench/fold_throughput.py [--quick]

0.4.0 is installed into .bench/ and imported under another name. Both sides
start from the same rows and do what each needs to go from rows to a grade
document: 0.4.0 validates each row (``CaseResult.from_row``) and calls its
``grade_document``; we call ``grade_document`` (which validates). Measured
from row dicts (rows handed over in memory, as the pytest plugin does) and
from JSON lines (rows read from a file, as ``truereward fold`` does). Times
are CPU time of this process (``time.process_time``): all of it is CPU
work, and on a shared machine wall time also counts other processes'
turns (``--wall`` times wall clock instead). Target: throughput ratio >= 1.5.

Also timed in the same rounds, as floors: pydantic validating the same 20
rows alone, as strict ``TypedDict`` rows with the record's field types (no
model instances, no fold, no document): the least any pydantic validation
of the rows costs. 0.4.0's whole path over that floor is the best ratio a
pydantic-validated record can reach (``ceiling``). And our first step alone,
the rows validated into our frozen records (``validate_rows``, no fold, no
document): no grade document from row dicts can beat that ratio
(``validation``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Annotated

from _common import alternate, install_target, load_as, ratio_line
from pydantic import ConfigDict, Field, TypeAdapter
from typing_extensions import TypedDict

import truereward
from truereward import CaseResult
from truereward.folding import validate_rows
from truereward.record.cases import CaseId, Kind, Verdict

KINDS = ["fail_to_pass"] * 5 + ["pass_to_pass"] * 15


class FloorRow(TypedDict, total=False):
    """A row's fields with the record's types and constraints, strict, as a
    TypedDict: validated by pydantic-core without building any object."""

    __pydantic_config__ = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)
    id: CaseId
    kind: Kind
    verdict: Verdict
    code: str
    why: str
    observations: list[dict[str, str]]
    measures: dict[str, float]
    checks: list[dict[str, object]]
    containment: dict[str, object] | None
    duration_s: Annotated[float, Field(ge=0)]


FLOOR: TypeAdapter[list[FloorRow]] = TypeAdapter(list[FloorRow])


def sample_rows() -> list[dict[str, object]]:
    rows = []
    for index, kind in enumerate(KINDS):
        verdict = "fail" if index in (3, 11) else "pass"
        rows.append(
            {
                "id": f"tests/test_m{index // 5}.py::TestThing::test_case_{index}[param-{index}]",
                "kind": kind,
                "verdict": verdict,
                "code": "",
                "why": "assert 2 == 3" if verdict == "fail" else "",
                "observations": [],
                "measures": {"ms": 10.0 + index},
                "checks": [],
                "containment": None,
                "duration_s": 0.01 * index,
            }
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--wall", action="store_true", help="wall-clock time, not CPU time")
    args = parser.parse_args()
    legacy = load_as(install_target("truereward==0.4.0") / "truereward", "truereward_040")
    assert legacy.__version__ == "0.4.0"
    rows = sample_rows()
    lines = [json.dumps(row) for row in rows]

    def ours_dicts() -> object:
        return truereward.grade_document(rows)

    def theirs_dicts() -> object:
        for row in rows:
            legacy.CaseResult.from_row(row)
        return legacy.grade_document(rows)

    def ours_json() -> object:
        return truereward.grade_document([CaseResult.model_validate_json(line) for line in lines])

    def theirs_json() -> object:
        parsed = [json.loads(line) for line in lines]
        for row in parsed:
            legacy.CaseResult.from_row(row)
        return legacy.grade_document(parsed)

    # Both sides agree on the answer before anything is timed.
    assert ours_dicts().reward == theirs_dicts()["reward"] == 0.0

    number, rounds = (200, 3) if args.quick else (2000, 15)
    clock = time.perf_counter if args.wall else time.process_time
    print(
        f"20-case run, {rounds} alternating rounds of {number} calls, "
        f"{'wall' if args.wall else 'CPU'} time, Python {sys.version.split()[0]}"
    )
    dicts = ratio_line(
        "from row dicts ",
        *alternate(ours_dicts, theirs_dicts, number=number, rounds=rounds, clock=clock),
    )
    jsons = ratio_line(
        "from JSON lines",
        *alternate(ours_json, theirs_json, number=number, rounds=rounds, clock=clock),
    )
    floor, legacy_again = alternate(
        lambda: FLOOR.validate_python(rows), theirs_dicts, number=number, rounds=rounds, clock=clock
    )
    ceiling = ratio_line("pydantic floor ", floor, legacy_again)
    first, legacy_third = alternate(
        lambda: validate_rows(rows), theirs_dicts, number=number, rounds=rounds, clock=clock
    )
    validation = ratio_line("rows validated ", first, legacy_third)
    print(
        f"RATIO fold_throughput dicts={dicts:.2f} json={jsons:.2f} (target >= 1.5); "
        f"ceiling for pydantic-validated rows from dicts {ceiling:.2f}; "
        f"validating our records alone {validation:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
