"""Parity, measured: truereward's criteria and harbor-rewardkit 0.2.3 on one
workspace (``tests/support/criteria_corpus.py``).

rewardkit runs in a Python 3.12 venv of its own (``tests/support/rewardkit.py``:
made once per machine, never skipped), each case as a tests directory
holding one criterion, through its own ``runner.run``. truereward grades the
same cases with the ``workspace`` reader. For every case rewardkit grades,
truereward gives its score; where rewardkit scores a fault 0, truereward
refuses with the grader's code; the documented differences are each what
``docs/criteria.md`` says, and the agreement count there is the one measured
here.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import truereward as tr
from tests.conftest import ROOT
from tests.support.criteria_corpus import (
    Case,
    build,
    cases,
    closed_port,
    kit_call,
    our_options,
    serve,
)
from tests.support.harbor import _locked
from tests.support.rewardkit import KitResult, rewardkit_scores, side_by_side
from truereward.codes import Ungradable, lookup

pytestmark = pytest.mark.slow

DOC = ROOT / "docs" / "criteria.md"
IDS = [
    case["id"]
    for case in cases({"root": Path("/r"), "app": Path("/r/app"), "logs": Path("/r/l")}, 1, 2)
]


class Measured:
    """The corpus, and what each side made of it."""

    def __init__(self, corpus: list[Case], kit: dict[str, KitResult], ours: dict[str, Any]) -> None:
        self.corpus = {case["id"]: case for case in corpus}
        self.kit = kit
        self.ours = ours


def _kit(
    tmp_path_factory: pytest.TempPathFactory, paths: dict[str, Path], corpus: list[Case]
) -> dict[str, KitResult]:
    """rewardkit's results, run once per session: under xdist the first worker
    runs it and the others read its answer (the results are values, the same
    whatever workspace path and port each worker's corpus has)."""
    calls = [
        {"id": case["id"], "call": kit_call(case)}
        | ({"workspace": case["workspace"]} if "workspace" in case else {})
        for case in corpus
    ]
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return rewardkit_scores(paths["app"], calls)
    shared = tmp_path_factory.getbasetemp().parent / "rewardkit-corpus.json"
    with _locked(shared.with_suffix(".lock")):
        if shared.exists():
            kept: dict[str, KitResult] = json.loads(shared.read_text())
            return kept
        found = rewardkit_scores(paths["app"], calls)
        shared.write_text(json.dumps(found))
        return found


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Measured:
    paths = build(tmp_path_factory.mktemp("corpus"))
    with serve() as port:
        corpus = cases(paths, port, closed_port())
        # rewardkit grades in a process of its own while truereward grades the
        # same cases here: neither writes to the workspace, and each waits out
        # its timeout cases (or another worker's rewardkit run) meanwhile.
        kit, ours = side_by_side(
            lambda: _kit(tmp_path_factory, paths, corpus), lambda: _ours(paths, corpus)
        )
    return Measured(corpus, kit, ours)


def _ours(paths: dict[str, Path], corpus: list[Case]) -> dict[str, Any]:
    """truereward's rows of the corpus by case id, one read a workspace (or
    the workspace's refusal, for each of its cases)."""
    ours: dict[str, Any] = {}
    by_workspace: dict[str, list[Case]] = {}
    for case in corpus:
        by_workspace.setdefault(case.get("workspace", str(paths["app"])), []).append(case)
    for workspace, group in by_workspace.items():
        spec = [
            {"id": case["id"], "kind": "fail_to_pass", "options": our_options(case)}
            for case in group
        ]
        try:
            ours.update({row.id: row for row in tr.read("workspace", workspace, spec)})
        except Ungradable as refused:  # the workspace refused as a whole
            ours.update({case["id"]: refused for case in group})
    return ours


def _kit_value(result: KitResult) -> float | str:
    if not result["wrote"]:
        assert result["error"], result
        return "crash"
    assert result["value"] is not None and result["reward"] == result["value"], result
    return result["value"]


def _our_value(found: Any) -> float | str:
    if isinstance(found, Ungradable):
        return found.code
    if found.verdict == "ungradable":
        return str(found.code)
    assert found.verdict in ("pass", "fail")
    return float(found.measures["score"])


def _agrees(case: Case, kit: float | str, ours: float | str) -> bool:
    if case["expect"] == "same":
        return isinstance(kit, float) and isinstance(ours, float) and round(ours, 4) == kit
    if case["expect"] == "refuse":
        return kit == 0.0 and ours == case["code"] and lookup(ours).blame.value == "grader"
    return False


def test_the_corpus_is_at_least_thirty_cases_of_every_kind() -> None:
    corpus = cases({"root": Path("/r"), "app": Path("/r/app"), "logs": Path("/r/l")}, 1, 2)
    assert len(corpus) >= 30
    assert len(set(IDS)) == len(IDS)
    from importlib.metadata import entry_points

    built_in = {point.name for point in entry_points(group="truereward.criteria")}
    assert {case["criterion"] for case in corpus} == built_in


@pytest.mark.parametrize("case_id", IDS)
def test_case(measured: Measured, case_id: str) -> None:
    case = measured.corpus[case_id]
    kit = _kit_value(measured.kit[case_id])
    ours = _our_value(measured.ours[case_id])
    if case["expect"] == "differ":
        assert (kit, ours) == (case["kit"], case["truereward"]), case["why"]
    else:
        assert _agrees(case, kit, ours), (case["expect"], kit, ours, measured.ours[case_id])


def test_agreement_count_is_the_documented_one(measured: Measured) -> None:
    counted = Counter(case["expect"] for case in measured.corpus.values())
    agreed = sum(
        _agrees(case, _kit_value(measured.kit[key]), _our_value(measured.ours[key]))
        for key, case in measured.corpus.items()
    )
    graded_or_faulted = counted["same"] + counted["refuse"]
    assert agreed == graded_or_faulted
    text = DOC.read_text()
    found = re.search(r"agree on \*\*(\d+) of (\d+)\*\* cases", text)
    assert found, "docs/criteria.md states the agreement count"
    assert (int(found[1]), int(found[2])) == (agreed, graded_or_faulted)
    total = re.search(r"a corpus of \*\*(\d+) cases\*\*", text)
    assert total and int(total[1]) == len(measured.corpus)


def test_every_difference_is_listed_in_the_docs() -> None:
    text = DOC.read_text()
    corpus = cases({"root": Path("/r"), "app": Path("/r/app"), "logs": Path("/r/l")}, 1, 2)
    for case in corpus:
        if case["expect"] == "differ":
            assert f"`{case['id']}`" in text, case["id"]


def test_a_missing_workspace_is_a_grade_with_that_refusal_alone(tmp_path: Path) -> None:
    spec = [
        {"id": "a", "kind": "fail_to_pass", "options": {"criterion": "file_exists", "path": "x"}}
    ]
    document = tr.grade_evidence("workspace", str(tmp_path / "absent"), spec)
    assert document.reward is None
    assert [(item.code, item.blame.value) for item in document.refusals] == [
        ("WORKSPACE_MISSING", "grader")
    ]
