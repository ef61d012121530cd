"""Generated sweeps for the grading and Prefect tests: one directory per
run, each with a task spec (``task.json``) and its evidence; and the
grade-run flow called on a request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FAULTS = "truereward.readers.faults:READER"


def case_ids(count: int) -> dict[str, str]:
    """``count`` cases: the first half fail-to-pass, the rest pass-to-pass."""
    half = max(1, count // 2)
    return {
        f"tests/test_mod{index:03d}.py::test_case": "fail_to_pass"
        if index < half
        else "pass_to_pass"
        for index in range(count)
    }


def rows_jsonl(cases: dict[str, str], failing: tuple[str, ...] = ()) -> str:
    """One passing row per case (``failing`` ids fail)."""
    return "".join(
        json.dumps({"id": case, "kind": kind, "verdict": "fail" if case in failing else "pass"})
        + "\n"
        for case, kind in cases.items()
    )


def make_run(root: Path, run: str, kind: str | tuple[Any, ...], cases: int = 4) -> Path:
    """A run directory of ``kind``:

    - ``"pass"`` / ``"fail"`` (a fail-to-pass case fails): rows, reader ``rows``;
    - ``"missing"``: no evidence (``EVIDENCE_MISSING``, the run's fault);
    - ``"malformed"``: evidence that is not rows (``EVIDENCE_MALFORMED``);
    - ``("heal", k)`` / ``("heal", k, code)``: a grader fault for attempts 1..k;
    - ``"never"``: a grader fault on every attempt;
    - ``("slow", seconds)``: passing rows, read after a delay.
    """
    directory = root / run
    directory.mkdir(parents=True, exist_ok=True)
    declared = case_ids(cases)
    spec: dict[str, Any] = {"cases": declared, "reader": "rows"}
    first = next(iter(declared))
    name = kind if isinstance(kind, str) else kind[0]
    if name in ("pass", "heal", "never", "slow"):
        (directory / "rows.jsonl").write_text(rows_jsonl(declared))
    elif name == "fail":
        (directory / "rows.jsonl").write_text(rows_jsonl(declared, (first,)))
    elif name == "malformed":
        (directory / "rows.jsonl").write_text('{"id": "x", "verdict": \n')
    elif name != "missing":
        raise ValueError(f"unknown run kind {kind!r}")
    plan: dict[str, Any] | None = None
    if name == "heal":
        plan = {"failing_attempts": kind[1], "code": kind[2] if len(kind) > 2 else None}
    elif name == "never":
        plan = {"failing_attempts": None}
    elif name == "slow":
        plan = {"failing_attempts": 0, "delay_seconds": kind[1]}
    if plan is not None:
        plan = {
            key: value
            for key, value in plan.items()
            if value is not None or key == "failing_attempts"
        }
        (directory / "faults.json").write_text(json.dumps(plan))
        spec["reader"] = FAULTS
    (directory / "task.json").write_text(json.dumps(spec))
    return directory


def make_sweep(root: Path, runs: dict[str, str | tuple[Any, ...]], cases: int = 4) -> Path:
    """A sweep directory with one run per entry of ``runs``."""
    root.mkdir(parents=True, exist_ok=True)
    for run, kind in runs.items():
        make_run(root, run, kind, cases)
    return root


def quicken(sweep: Path, seconds: float) -> None:
    """Every run of ``sweep`` read in ``seconds`` from now on (its fault plan
    rewritten): the rerun need not wait out the delays that kept the first
    flow run mid-sweep."""
    for plan in sweep.glob("*/faults.json"):
        plan.write_text(json.dumps({**json.loads(plan.read_text()), "delay_seconds": seconds}))


def published(target: Path) -> dict[str, dict[str, Any]]:
    """Per run under ``target``: its grade.json (parsed) and which files exist."""
    found: dict[str, dict[str, Any]] = {}
    for directory in sorted(path for path in target.iterdir() if path.is_dir()):
        grade = directory / "grade.json"
        found[directory.name] = {
            "grade": json.loads(grade.read_text()) if grade.exists() else None,
            "files": sorted(path.name for path in directory.iterdir()),
        }
    return found


def snapshot(target: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``target``: its bytes and its mtime (ns)."""
    return {
        str(path.relative_to(target)): (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(target.rglob("*"))
        if path.is_file()
    }


def run_flow(**request: Any) -> Any:
    """The final state of the grade-run flow called (in this process) on the
    request ``request`` describes."""
    from flows.grade_run import grade_run
    from truereward.grading import GradeRequest

    return grade_run(GradeRequest.model_validate(request), return_state=True)
