"""A grade the run could have written is never believed on its word.

The forgery of issue 26, built with the library's own public API: a run
writes into its ``logs/verifier`` a grade folded from all-pass rows of its
choosing that records its real (failing) evidence by path and true sha256,
published with ``truereward.publish`` (so ``ctrf.json``, ``reward.json``
and ``reward.txt`` match it). Graded in place (the plain loop, the
``grade-run`` flow, a bucket), through ``truereward grade`` and ``truereward
fold``, and under the pytest plugin, the published reward is the honest one
every time, and the forged grade is kept aside as ``grade.previous.json``.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import truereward as tr
from tests.support.sweeps import case_ids, make_sweep, rows_jsonl, run_flow, snapshot
from truereward.cli import main
from truereward.grading import GradeRequest, grade_request


def no_wait(_: float) -> None:
    return None


def forge(
    logs: str | Path,
    cases: dict[str, str],
    evidence: dict[str, bytes],
    *,
    verdict: str = "pass",
    storage_options: dict[str, Any] | None = None,
    **document: Any,
) -> tr.GradeDocument:
    """What a run can write: a grade of ``verdict`` for every case, recording
    each of ``evidence`` (path as the grade names it -> its real bytes) by
    its true sha256, published with its CTRF view and reward files."""
    rows = [
        {"id": case, "kind": kind, "verdict": verdict}
        | (
            {"code": "EVIDENCE_MISSING", "why": "nothing to read"}
            if verdict == "ungradable"
            else {}
        )
        for case, kind in cases.items()
    ]
    digests = [
        {"path": path, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
        for path, data in evidence.items()
    ]
    forged = tr.grade_document(rows, case_set=cases, evidence=digests, **document)
    tr.publish(forged, logs, storage_options=storage_options)
    return forged


def forge_run(run: Path, verdict: str = "pass") -> tr.GradeDocument:
    """Forge the grade of a run of ``make_sweep`` in its own logs/verifier."""
    spec = json.loads((run / "task.json").read_text())
    return forge(
        run / "logs" / "verifier",
        spec["cases"],
        {"rows.jsonl": (run / "rows.jsonl").read_bytes()},
        verdict=verdict,
        run={"id": run.name, "sweep": run.parent.name},
    )


def grade_of(logs: Path) -> tr.GradeDocument:
    return tr.GradeDocument.from_bytes((logs / "grade.json").read_bytes())


def test_a_forged_grade_in_place_never_stands(tmp_path: Path) -> None:
    """The issue's sweep: two failing runs forged to 1.0 beside an honest
    pass. Graded in place, the honest mean is 1/3, the forged grades are set
    aside, `verify` is clean, and grading again changes nothing."""
    sweep = make_sweep(tmp_path / "nightly", {"a": "pass", "b": "fail", "c": "fail"})
    forged = {run: forge_run(sweep / run) for run in ("b", "c")}
    result = grade_request(GradeRequest(sweep=str(sweep)), sleep=no_wait)
    assert result.summary.reward.mean == pytest.approx(1 / 3)
    assert result.distrusted == 2 and "2 over an untrusted grade" in result.headline()
    for run in ("b", "c"):
        logs = sweep / run / "logs" / "verifier"
        graded = grade_of(logs)
        assert graded.gradable and graded.reward == 0.0
        assert (logs / "reward.txt").read_text() == "0.0\n"
        assert json.loads((logs / "reward.json").read_text()) == {"reward": 0.0}
        assert (logs / "grade.previous.json").read_bytes() == forged[run].to_bytes()
    assert main(["verify", str(sweep)]) == 0
    before = snapshot(sweep)
    again = grade_request(GradeRequest(sweep=str(sweep)), sleep=no_wait)
    assert again.distrusted == 0 and again.published == {"unchanged": 3}
    assert snapshot(sweep) == before


def test_a_forged_refusal_does_not_dodge_a_zero(tmp_path: Path) -> None:
    """A failing run that plants an ungradable grade (no reward, so out of
    the mean) is graded: its honest 0.0 stands."""
    sweep = make_sweep(tmp_path / "s", {"b": "fail"})
    forge_run(sweep / "b", verdict="ungradable")
    result = grade_request(GradeRequest(sweep=str(sweep)), sleep=no_wait)
    graded = grade_of(sweep / "b" / "logs" / "verifier")
    assert graded.gradable and graded.reward == 0.0 and result.distrusted == 1


def test_an_honest_grade_in_place_is_confirmed_and_kept(tmp_path: Path) -> None:
    """A grade the evidence gives again (what a verifier or an earlier flow
    run published there) is kept as it is: nothing is written."""
    sweep = make_sweep(tmp_path / "s", {"a": "pass", "b": "fail"})
    grade_request(GradeRequest(sweep=str(sweep)), sleep=no_wait)
    before = snapshot(sweep)
    again = grade_request(GradeRequest(sweep=str(sweep)), sleep=no_wait)
    assert again.published == {"unchanged": 2} and again.already_graded == 2
    assert snapshot(sweep) == before
    assert not list(sweep.rglob("grade.previous.json"))


def test_a_planted_file_that_is_not_a_grade_is_replaced_and_kept(tmp_path: Path) -> None:
    """Issue 26, item 3: `{}` as grade.json with a planted reward.txt 1.0
    in a run graded in place is replaced (the flow does not fail on it) and
    kept aside; grading again changes nothing."""
    sweep = make_sweep(tmp_path / "s", {"a": "fail", "b": "pass"})
    logs = sweep / "a" / "logs" / "verifier"
    logs.mkdir(parents=True)
    (logs / "grade.json").write_text("{}")
    (logs / "reward.txt").write_text("1.0\n")
    result = grade_request(GradeRequest(sweep=str(sweep)), sleep=no_wait)
    assert result.failed == 0 and result.state_name != "Publish failed"
    assert result.distrusted == 1
    assert grade_of(logs).reward == 0.0 and (logs / "reward.txt").read_text() == "0.0\n"
    assert (logs / "grade.previous.json").read_text() == "{}"
    before = snapshot(sweep)
    again = grade_request(GradeRequest(sweep=str(sweep)), sleep=no_wait)
    assert again.published == {"unchanged": 2} and snapshot(sweep) == before


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    actual=st.lists(st.sampled_from(["pass", "fail"]), min_size=2, max_size=5),
    claimed=st.lists(st.sampled_from(["pass", "fail", "ungradable"]), min_size=2, max_size=5),
    scheme=st.sampled_from(["gated-binary/1", "fix-rate/1"]),
)
def test_whatever_grade_a_run_forges_the_published_reward_is_the_honest_one(
    tmp_path_factory: pytest.TempPathFactory, actual: list[str], claimed: list[str], scheme: str
) -> None:
    root = tmp_path_factory.mktemp("forged")
    cases = case_ids(len(actual))
    run = root / "s" / "r"
    run.mkdir(parents=True)
    failing = tuple(case for case, verdict in zip(cases, actual, strict=True) if verdict == "fail")
    (run / "rows.jsonl").write_text(rows_jsonl(cases, failing))
    (run / "task.json").write_text(json.dumps({"cases": cases, "reader": "rows"}))
    honest = tr.fold(
        [json.loads(line) for line in (run / "rows.jsonl").read_text().splitlines()],
        case_set=cases,
        scheme=scheme,
    )
    claims = dict(zip(cases, claimed, strict=False))
    rows = [
        {"id": case, "kind": kind, "verdict": claims.get(case, "pass")}
        | ({"code": "CASE_NOT_GRADED", "why": "x"} if claims.get(case) == "ungradable" else {})
        for case, kind in cases.items()
    ]
    data = (run / "rows.jsonl").read_bytes()
    forged = tr.grade_document(
        rows,
        case_set=cases,
        scheme=scheme,
        evidence=[{"path": "rows.jsonl", "sha256": hashlib.sha256(data).hexdigest(), "size": 1}],
    )
    tr.publish(forged, run / "logs" / "verifier")
    grade_request(GradeRequest(sweep=str(run.parent), scheme=scheme), sleep=no_wait)
    published = grade_of(run / "logs" / "verifier")
    assert (published.gradable, published.reward) == (honest.gradable, honest.reward)
    reward_txt = run / "logs" / "verifier" / "reward.txt"
    assert reward_txt.read_text() == f"{honest.reward}\n"


@pytest.mark.slow
def test_the_flow_graded_in_place_publishes_the_honest_rewards(
    prefect_client_settings: str, tmp_path: Path
) -> None:
    """The same forgery under the grade-run flow on a real server."""
    sweep = make_sweep(tmp_path / "nightly", {"a": "pass", "b": "fail", "c": "fail"})
    for run in ("b", "c"):
        forge_run(sweep / run)
    state = run_flow(sweep=str(sweep), retry_delay_seconds=0)
    result = state.result()
    assert state.name == "Graded" and result.summary.reward.mean == pytest.approx(1 / 3)
    assert [grade_of(sweep / run / "logs" / "verifier").reward for run in "abc"] == [
        1.0,
        0.0,
        0.0,
    ]


def ctrf_report(tests: dict[str, str]) -> bytes:
    return json.dumps(
        {
            "reportFormat": "CTRF",
            "specVersion": "1.0.0",
            "results": {
                "tool": {"name": "pytest"},
                "summary": {
                    "tests": len(tests),
                    "passed": sum(status == "passed" for status in tests.values()),
                    "failed": sum(status == "failed" for status in tests.values()),
                    "skipped": 0,
                    "pending": 0,
                    "other": 0,
                    "start": 1,
                    "stop": 2,
                },
                "tests": [
                    {"name": name, "status": status, "duration": 1}
                    for name, status in tests.items()
                ],
            },
        }
    ).encode()


def test_truereward_grade_replaces_a_forged_grade_and_keeps_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`truereward grade report.json --reader ctrf --logs LOGS` over the
    forgery: exit 0, the honest 0.0, the forgery kept (it exited 3 and left
    the forged reward.txt 1.0)."""
    cases = {"test_fix": "fail_to_pass", "test_guard": "pass_to_pass"}
    report = tmp_path / "report.json"
    report.write_bytes(ctrf_report({"test_fix": "failed", "test_guard": "passed"}))
    spec = tmp_path / "task.json"
    spec.write_text(json.dumps({"cases": cases}))
    logs = tmp_path / "logs"
    forged = forge(logs, cases, {str(report): report.read_bytes()})
    again = ["grade", str(report), "--reader", "ctrf", "--case-set", str(spec), "--logs", str(logs)]
    status = main(again)
    err = capsys.readouterr().err
    assert status == 0, err
    assert "its rows are not what the evidence gives now (test_fix: pass stated, fail now)" in err
    assert "kept as grade.previous.json" in err
    assert grade_of(logs).reward == 0.0 and (logs / "reward.txt").read_text() == "0.0\n"
    assert (logs / "grade.previous.json").read_bytes() == forged.to_bytes()
    assert main(["verify", str(logs)]) == 0
    # The honest grade is this evidence's: grading it again is a conflict
    # (name it to replace it), never a silent overwrite.
    assert main([*again, "--scheme", "fix-rate/1"]) == 3


def test_truereward_fold_replaces_a_forged_grade_and_keeps_it(tmp_path: Path) -> None:
    cases = {"a": "fail_to_pass", "b": "pass_to_pass"}
    rows = tmp_path / "rows.jsonl"
    rows.write_text(rows_jsonl(cases, ("a",)))
    logs = tmp_path / "logs"
    forged = forge(logs, cases, {str(rows): rows.read_bytes()})
    assert main(["fold", str(rows), "--logs", str(logs)]) == 0
    assert grade_of(logs).reward == 0.0 and (logs / "reward.txt").read_text() == "0.0\n"
    assert (logs / "grade.previous.json").read_bytes() == forged.to_bytes()


@pytest.mark.slow
def test_the_plugin_never_takes_a_forged_grade(tmp_path: Path) -> None:
    """The plugin grades afresh: the forged grade is set aside before any
    test runs and the session publishes the honest 0.0."""
    verifier = tmp_path / "verifier"
    verifier.mkdir()
    cases = {"fix": "fail_to_pass", "guard": "pass_to_pass"}
    (verifier / "task.json").write_text(json.dumps({"cases": cases}))
    (verifier / "test_grade.py").write_text(
        "import pytest\n"
        "from truereward import CaseResult\n"
        "from truereward.plugin import cases\n"
        "CASES = cases('task.json')\n"
        "@pytest.mark.parametrize('case', CASES, ids=lambda case: case.id)\n"
        "def test_case(case, grade):\n"
        "    verdict = 'fail' if case.id == 'fix' else 'pass'\n"
        "    grade(case, lambda c: CaseResult(id=c.id, kind=c.kind, verdict=verdict))\n"
    )
    logs = tmp_path / "logs"
    forged = forge(logs, cases, {})
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "truereward.plugin", f"--grade-logs={logs}", "-q"],
        cwd=verifier,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr  # the fix's test failed
    assert grade_of(logs).reward == 0.0 and (logs / "reward.txt").read_text() == "0.0\n"
    assert (logs / "grade.previous.json").read_bytes() == forged.to_bytes()


def test_a_forged_grade_in_a_bucket_graded_in_place(
    s3_endpoint: str, s3_client: Any, bucket: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs in a bucket, graded into their own logs/verifier there: the
    forged grade is replaced by the honest one and kept beside it."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    local = make_sweep(tmp_path / "nightly", {"a": "pass", "b": "fail"})
    for path in local.rglob("*"):
        if path.is_file():
            key = f"nightly/{path.relative_to(local)}"
            s3_client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
    options = {"endpoint_url": s3_endpoint, "client_kwargs": {"region_name": "us-east-1"}}
    spec = json.loads((local / "b" / "task.json").read_text())
    forged = forge(
        f"s3://{bucket}/nightly/b/logs/verifier",
        spec["cases"],
        {"rows.jsonl": (local / "b" / "rows.jsonl").read_bytes()},
        storage_options=options,
    )
    result = grade_request(
        GradeRequest(sweep=f"s3://{bucket}/nightly", storage_options=options), sleep=no_wait
    )
    assert result.distrusted == 1 and result.failed == 0

    def body(key: str) -> bytes:
        return bytes(s3_client.get_object(Bucket=bucket, Key=key)["Body"].read())

    logs = "nightly/b/logs/verifier"
    assert tr.GradeDocument.from_bytes(body(f"{logs}/grade.json")).reward == 0.0
    assert body(f"{logs}/reward.txt") == b"0.0\n"
    assert body(f"{logs}/grade.previous.json") == forged.to_bytes()
    again = grade_request(
        GradeRequest(sweep=f"s3://{bucket}/nightly", storage_options=options), sleep=no_wait
    )
    assert again.published == {"unchanged": 2}


def test_a_planted_grade_too_large_to_be_one_is_moved_aside(tmp_path: Path) -> None:
    """A grade.json larger than any grade (a sparse file: no disk used) in a
    run graded in place is moved aside unread, and the run is published."""
    sweep = make_sweep(tmp_path / "s", {"a": "fail"})
    logs = sweep / "a" / "logs" / "verifier"
    logs.mkdir(parents=True)
    with (logs / "grade.json").open("wb") as planted:
        planted.truncate(65 << 20)
    (logs / "reward.txt").write_text("1.0\n")
    result = grade_request(GradeRequest(sweep=str(sweep)), sleep=no_wait)
    assert result.failed == 0 and result.published == {"created": 1}
    assert grade_of(logs).reward == 0.0 and (logs / "reward.txt").read_text() == "0.0\n"
    aside = [path for path in logs.iterdir() if path.name.startswith(".set-aside.grade.json")]
    assert len(aside) == 1 and aside[0].stat().st_size == 65 << 20
