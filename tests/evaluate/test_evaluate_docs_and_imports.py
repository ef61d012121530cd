"""The examples in docs/evaluate.md and docs/sweeps.md run; the new packages import lightly."""

from __future__ import annotations

import re
import subprocess
import sys

import truereward as tr
from tests.support.doc_blocks import python_blocks


def test_the_evaluate_example_runs_and_says_what_it_claims():
    code = python_blocks("evaluate.md")[0]
    namespace: dict[str, object] = {}
    exec(compile(code, "docs/evaluate.md", "exec"), namespace)
    claims = re.findall(r"^(report\.[\w.]+(?:, report\.[\w.]+)*)\s+# (.+)$", code, re.M)
    assert claims, "the example states its outcome"
    for expression, expected in claims:
        assert repr(eval(expression, namespace)) == expected.strip(), expression


def test_the_sweeps_python_example_runs(tmp_path):
    code = python_blocks("sweeps.md")[0]
    sweep = tmp_path / "nightly"
    document = tr.grade_document(
        [{"id": "t::a", "kind": "fail_to_pass", "verdict": "pass"}], run={"id": "run-1"}
    )
    tr.publish(document, sweep / "run-1")
    code = code.replace('"out/nightly"', repr(str(sweep)))
    namespace: dict[str, object] = {"documents": [document]}
    exec(compile(code, "docs/sweeps.md", "exec"), namespace)
    summary = namespace["summary"]
    assert summary.runs == 1 and summary.reward.mean == 1.0  # type: ignore[attr-defined]


def loaded_after(statement: str, modules: tuple[str, ...]) -> list[str]:
    script = f"import sys\n{statement}\nprint(','.join(m for m in {modules!r} if m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return [name for name in result.stdout.strip().split(",") if name]


def test_the_new_packages_import_nothing_heavy():
    heavy = ("pydantic", "fsspec", "asyncio", "prefect")
    assert loaded_after("import truereward.evaluate, truereward.sweeps", heavy) == []
    # The record carries a EvaluationReport, yet the fold does not need an event loop.
    assert loaded_after("import truereward; truereward.fold", ("asyncio", "fsspec")) == []


def test_a_local_sweep_is_read_without_fsspec(tmp_path):
    tr.publish(
        tr.grade_document([{"id": "a", "kind": "fail_to_pass", "verdict": "pass"}]),
        tmp_path / "r1",
    )
    statement = (
        "from truereward.sweeps import SweepSource, summarize\n"
        f"assert summarize(SweepSource({str(tmp_path)!r}).records()).gradable == 1"
    )
    assert loaded_after(statement, ("fsspec", "asyncio")) == []
