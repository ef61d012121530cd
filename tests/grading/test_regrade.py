"""Regrading after a fault is fixed, without Prefect: which runs each policy
grades again, the grade each replaces, the attempts each keeps, and what
``truereward sweep retries`` says before and after."""

from __future__ import annotations

import json
import shlex
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.markdown import PARSER, as_read, shown, table_rows
from tests.support.sweeps import make_sweep, snapshot
from truereward import GradeDocument, PublishConflict, grade_document, publish
from truereward.cli import main
from truereward.grading import GradeRequest, grade_request
from truereward.grading.triage import selects
from truereward.record.refusal import outlook


def no_wait(_: float) -> None:
    return None


OUTAGE: dict[str, Any] = {
    "ok": "pass",
    "fails": "fail",
    "down-a": "never",  # refused after every attempt: the store is down
    "down-b": "never",
    "heals": ("heal", 1),  # retried once, then gradable
    "blamed": "missing",  # the run's own fault: never regraded for grader refusals
    "invalid": "malformed",  # the run's evidence is malformed: run-blamed too
}


def heal(sweep: Path, *runs: str) -> None:
    """Fix the store: the runs' fault plans no longer fail."""
    for run in runs:
        plan = sweep / run / "faults.json"
        plan.write_text(json.dumps({**json.loads(plan.read_text()), "failing_attempts": 0}))


def grades(out: Path) -> dict[str, dict[str, Any]]:
    return {
        path.parent.name: json.loads(path.read_text()) for path in sorted(out.glob("*/grade.json"))
    }


@pytest.mark.parametrize(
    ("policy", "standing", "changed", "expected"),
    [
        ("none", "retryable", True, False),
        ("grader-refusals", "retryable", False, True),
        ("grader-refusals", "needs-fix", False, False),
        ("grader-refusals", "needs-fix", True, True),
        ("grader-refusals", "final", True, False),
        ("grader-refusals", "gradable", True, False),
        ("needing-fix", "needs-fix", False, True),
        ("needing-fix", "retryable", True, False),
        ("needing-fix", "final", True, False),
        ("refusals", "final", False, True),
        ("refusals", "gradable", False, False),
        ("all", "gradable", False, True),
    ],
)
def test_which_standing_grades_each_policy_selects(policy, standing, changed, expected) -> None:
    asked: list[bool] = []

    def ask() -> bool:
        asked.append(True)
        return changed

    assert selects(policy, standing, ask) is expected
    # The task definition is read again only for a grade that needs a fix.
    assert not asked or (policy, standing) == ("grader-refusals", "needs-fix")


@pytest.mark.parametrize(
    ("refusals", "expected"),
    [
        ([], "gradable"),
        ([("EVIDENCE_UNREADABLE", "grader")], "retryable"),
        ([("EVIDENCE_UNREADABLE", "grader"), ("CASES_MISSING", "grader")], "needs-fix"),
        ([("NO_FAIL_TO_PASS", "grader")], "needs-fix"),
        ([("NO_SUCH_CODE_ANYWHERE", "grader")], "needs-fix"),
        ([("EVIDENCE_UNREADABLE", "grader"), ("EVIDENCE_MISSING", "run")], "final"),
    ],
)
def test_the_outlook_of_a_refused_grade(refusals, expected) -> None:
    assert outlook(refusals) == expected


def _break_definition(sweep: Path, run: str, how: str) -> None:
    """Make ``run``'s task definition one that grading again cannot heal:
    ``missing`` declares a case no row names (``CASES_MISSING``),
    ``no-f2p`` declares no fail-to-pass case (``NO_FAIL_TO_PASS``)."""
    path = sweep / run / "task.json"
    spec = json.loads(path.read_text())
    if how == "missing":
        spec["cases"]["tests/test_absent.py::test_never_ran"] = "pass_to_pass"
    else:
        spec["cases"] = {case: "pass_to_pass" for case in spec["cases"]}
        rows = sweep / run / "rows.jsonl"
        rows.write_text(rows.read_text().replace('"fail_to_pass"', '"pass_to_pass"'))
    path.write_text(json.dumps(spec))


def _fix_definition(sweep: Path, run: str) -> None:
    path = sweep / run / "task.json"
    spec = json.loads(path.read_text())
    spec["cases"].pop("tests/test_absent.py::test_never_ran")
    path.write_text(json.dumps(spec))


def test_refusals_that_need_a_fix_are_regraded_only_when_their_input_changed(
    tmp_path: Path, capsys
) -> None:
    sweep = make_sweep(tmp_path / "nightly", {"ok": "pass", "cases": "pass", "kinds": "pass"})
    _break_definition(sweep, "cases", "missing")
    _break_definition(sweep, "kinds", "no-f2p")
    out = tmp_path / "graded"
    request = GradeRequest(sweep=str(sweep), target=str(out))
    first = grade_request(request, sleep=no_wait)
    assert (first.summary.needs_fix, first.summary.retryable) == (2, 0)
    assert first.summary.needs_fix_runs == ["cases", "kinds"]
    assert grades(out)["cases"]["definition"] != grades(out)["kinds"]["definition"]
    assert "definition" not in grades(out)["ok"]  # recorded only where it is needed

    # An ops regrade with nothing changed grades nothing again: no new attempt.
    ops = request.model_copy(update={"regrade": "grader-refusals"})
    before = snapshot(out)
    second = grade_request(ops, sleep=no_wait)
    assert (second.graded, second.regraded, second.already_graded) == (0, 0, 3)
    assert second.summary.attempts.retried == 0
    assert {k: v for k, v in snapshot(out).items() if "/" in k} == {
        k: v for k, v in before.items() if "/" in k
    }

    # sweep retries lists them apart, with what to change, and no command that
    # would only grade them again as they are.
    assert main(["sweep", "retries", str(out), "--format", "json", "--runs", str(sweep)]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert (listing["retryable"], listing["needs_fix"], listing["regrade"]) == (0, 2, None)
    assert "--regrade needing-fix" in listing["needing_fix"]["local"]
    by_run = {item["run"]: item for item in listing["runs"]}
    assert by_run["cases"]["outlook"] == "needs-fix"
    assert by_run["cases"]["fix"].startswith("CASES_MISSING: change the task definition")
    assert by_run["kinds"]["fix"].startswith("NO_FAIL_TO_PASS: change the task definition")

    # The task definition of one is fixed: that one (its digest changed) is
    # graded again and heals; the other is kept.
    _fix_definition(sweep, "cases")
    third = grade_request(ops, sleep=no_wait)
    assert (third.graded, third.regraded, third.already_graded) == (1, 1, 2)
    healed = grades(out)["cases"]
    assert healed["gradable"] and "definition" not in healed
    assert [item["attempt"] for item in healed["attempts"]] == [1]
    assert third.summary.needs_fix_runs == ["kinds"]

    # Asked by its own policy, the other is graded again whatever changed;
    # nothing did, and every report says so.
    fourth = grade_request(request.model_copy(update={"regrade": "needing-fix"}), sleep=no_wait)
    assert (fourth.graded, fourth.regraded, fourth.unchanged) == (1, 1, 1)
    assert "(1 regraded, 1 with nothing changed)" in fourth.headline()
    assert (fourth.summary.needs_fix, fourth.summary.unchanged) == (1, 1)
    assert main(["sweep", "retries", str(out)]) == 0
    text = capsys.readouterr().out
    assert "1 run still refused for the grader's reasons (0 retryable, 1 needing a fix, " in text
    assert "1 graded again with nothing changed" in text
    assert "needs a fix, graded again with nothing changed: NO_FAIL_TO_PASS" in text


def test_the_retries_table_shows_run_ids_and_the_target_as_they_are(tmp_path: Path, capsys) -> None:
    runs = ["`x|y`", "<!--"]
    sweep = make_sweep(tmp_path / "sweep", {run: ("heal", 1) for run in runs})
    out = tmp_path / "out|`a`\\b"
    grade_request(GradeRequest(sweep=str(sweep), target=str(out), retry_delay_seconds=0))
    assert main(["sweep", "retries", str(out), "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("## Retries: ")
    assert shown(PARSER.parse(text)[1]) == "Retries: " + as_read(str(out))
    rows = table_rows(text)
    assert [row[:4] for row in rows] == [[run, "gradable", "1.0", "2"] for run in sorted(runs)]


def test_regrading_grader_refusals_after_an_outage(tmp_path: Path, capsys) -> None:
    sweep = make_sweep(tmp_path / "nightly", OUTAGE)
    out = tmp_path / "graded"
    first = grade_request(GradeRequest(sweep=str(sweep), target=str(out)), sleep=no_wait)
    assert first.summary.grader_refused == 2
    assert first.summary.grader_refused_runs == ["down-a", "down-b"]
    assert first.headline() == (
        "7 runs: 3 gradable (mean reward 0.6667), 4 refused (2 retryable, 0 needing a fix); "
        "graded now 7, 3 retried (1 healed)"
    )
    before = grades(out)

    # sweep retries lists the retried and the grader-refused runs, attempt by attempt.
    assert main(["sweep", "retries", str(out), "--format", "json", "--runs", str(sweep)]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [item["run"] for item in listing["runs"]] == ["down-a", "down-b", "heals"]
    down = listing["runs"][0]
    assert (down["gradable"], down["reward"]) == (False, None)
    assert [(item["attempt"], item["gradable"], item["codes"]) for item in down["attempts"]] == [
        (1, False, ["EVIDENCE_UNREADABLE"]),
        (2, False, ["EVIDENCE_UNREADABLE"]),
        (3, False, ["EVIDENCE_UNREADABLE"]),
    ]
    assert "injected grader fault (attempt 3)" in down["attempts"][2]["why"]
    assert listing["runs"][2]["attempts"][-1] == {
        "attempt": 2,
        "gradable": True,
        "codes": [],
        "blame": [],
        "why": "",
    }
    assert (listing["retried"], listing["healed"], listing["still_refused"]) == (3, 1, 2)
    assert (listing["retryable"], listing["needs_fix"], listing["needing_fix"]) == (2, 0, None)

    # The footer's command is the request that grades exactly those again.
    command = shlex.split(listing["regrade"]["deployment"])
    assert command[:4] == ["prefect", "deployment", "run", "grade-run/local"]
    request = GradeRequest.model_validate_json(command[5].removeprefix("request="))
    assert (request.sweep, request.target, request.regrade) == (
        str(sweep),
        str(out),
        "grader-refusals",
    )
    assert listing["regrade"]["local"] == (
        f"python flows/grade_run.py {sweep} --regrade grader-refusals --target {out}"
    )

    heal(sweep, "down-a", "down-b")
    # The sweep report changes with the sweep; every run but those is untouched.
    untouched = {
        name: data for name, data in snapshot(out).items() if "/" in name and "down-" not in name
    }
    second = grade_request(request, sleep=no_wait)
    assert second.published == {"replaced": 2, "unchanged": 5}
    assert (second.graded, second.regraded, second.already_graded) == (2, 2, 5)
    assert {
        name: data for name, data in snapshot(out).items() if "/" in name and "down-" not in name
    } == untouched  # byte for byte, mtimes too
    after = grades(out)
    for run in ("down-a", "down-b"):
        grade = after[run]
        assert grade["gradable"] and grade["reward"] == 1.0
        # Both flow runs' attempts, oldest first: the earlier document's own
        # attempts, that document itself, then this flow run's.
        assert [item["attempt"] for item in grade["attempts"]] == [1, 2, 3]
        assert grade["run"]["attempt"] == 4
        assert grade["attempts"][2]["refusals"] == before[run]["refusals"]
        assert (out / run / "reward.txt").read_text() == "1.0\n"

    assert main(["sweep", "retries", str(out), "--still-refused", "--format", "json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["runs"] == [] and again["still_refused"] == 0 and again["regrade"] is None


def test_a_run_blamed_refusal_is_never_regraded_for_grader_refusals(tmp_path: Path) -> None:
    sweep = make_sweep(tmp_path / "s", {"blamed": "missing", "invalid": "malformed"})
    out = tmp_path / "out"
    grade_request(GradeRequest(sweep=str(sweep), target=str(out)), sleep=no_wait)
    before = snapshot(out)
    again = grade_request(
        GradeRequest(sweep=str(sweep), target=str(out), regrade="grader-refusals"), sleep=no_wait
    )
    assert again.published == {"unchanged": 2} and again.regraded == 0
    assert snapshot(out) == before
    every = grade_request(
        GradeRequest(sweep=str(sweep), target=str(out), regrade="refusals"), sleep=no_wait
    )
    assert every.regraded == 2 and every.published == {"replaced": 2}


def test_regrade_all_keeps_the_history_of_a_gradable_grade(tmp_path: Path) -> None:
    sweep = make_sweep(tmp_path / "s", {"ok": "pass"})
    out = tmp_path / "out"
    grade_request(GradeRequest(sweep=str(sweep), target=str(out)), sleep=no_wait)
    first = GradeDocument.from_bytes((out / "ok" / "grade.json").read_bytes())
    result = grade_request(
        GradeRequest(sweep=str(sweep), target=str(out), regrade="all"), sleep=no_wait
    )
    assert result.published == {"replaced": 1}
    second = GradeDocument.from_bytes((out / "ok" / "grade.json").read_bytes())
    assert second.run is not None and second.run.attempt == 2
    assert [(item.attempt, item.gradable, item.reward) for item in second.attempts] == [
        (1, True, 1.0)
    ]
    assert first.run is not None and second.attempts[0].started == first.run.started


def test_a_grade_changed_meanwhile_is_a_reported_conflict(tmp_path: Path, monkeypatch) -> None:
    """The regrade planned over grade A; another publisher replaced A with B
    before the regrade published: the regrade is a conflict, B stays."""
    from truereward.grading import triage as triage_module

    sweep = make_sweep(tmp_path / "s", {"down": "never"})
    out = tmp_path / "out"
    grade_request(GradeRequest(sweep=str(sweep), target=str(out)), sleep=no_wait)
    heal(sweep, "down")
    standing = GradeDocument.from_bytes((out / "down" / "grade.json").read_bytes())
    other = GradeDocument.model_validate({**standing.model_dump(), "run": {"id": "down"}})

    looked = triage_module.triage

    def then_someone_else_publishes(job, stored, policy, *rest):  # type: ignore[no-untyped-def]
        planned = looked(job, stored, policy, *rest)
        publish(other, job.target, replaces=standing.digest)
        return planned

    monkeypatch.setattr(triage_module, "triage", then_someone_else_publishes)
    result = grade_request(
        GradeRequest(sweep=str(sweep), target=str(out), regrade="grader-refusals"), sleep=no_wait
    )
    assert result.published == {"conflict": 1} and result.state_name == "Publish failed"
    assert "replaces" in result.failures[0].why or standing.digest in result.failures[0].why
    assert (out / "down" / "grade.json").read_bytes() == other.to_bytes()
    assert not (out / "down" / "reward.txt").exists()


def consistent(target: str, options: dict[str, Any]) -> GradeDocument:
    """The grade standing at ``target``, after checking the files beside it
    belong to it (ctrf.json made from it; reward files exactly when it is
    gradable, with its reward)."""
    import hashlib

    import fsspec

    fs, root = fsspec.core.url_to_fs(target, **options)
    grade = fs.cat_file(f"{root}/grade.json")
    document = GradeDocument.from_bytes(grade)
    report = json.loads(fs.cat_file(f"{root}/ctrf.json"))
    assert report["extra"]["truereward"]["grade_sha256"] == hashlib.sha256(grade).hexdigest()
    if document.gradable:
        assert fs.cat_file(f"{root}/reward.txt") == f"{document.reward!r}\n".encode()
    else:
        assert not fs.exists(f"{root}/reward.txt") and not fs.exists(f"{root}/reward.json")
    return document


@pytest.mark.slow
@pytest.mark.parametrize("where", ["local", "s3"])
def test_regrade_racing_another_publisher_has_one_winner(
    where: str, tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A regrade and a second publisher both replace the grade they read, at
    the same moment: exactly one wins, the other is a conflict (reported in
    the regrade's result, raised to the other publisher), and the files
    stand for the winner."""
    import random

    from truereward.grading import triage as triage_module

    sweep = make_sweep(tmp_path / "s", {"down": "never"})
    options: dict[str, Any] = {}
    if where == "local":
        target = str(tmp_path / "out")
    else:
        endpoint = request.getfixturevalue("s3_endpoint")
        target = f"s3://{request.getfixturevalue('bucket')}/graded"
        options = {"endpoint_url": endpoint, "client_kwargs": {"region_name": "us-east-1"}}
        # Credentials come from the environment, as on a worker.
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    base: dict[str, Any] = {"sweep": str(sweep), "target": target, "storage_options": options}
    grade_request(GradeRequest(**base), sleep=no_wait)
    heal(sweep, "down")
    run_target = f"{target}/down"
    looked = triage_module.triage
    seen = {"regrade": 0, "other": 0}
    for attempt in range(10):
        standing = consistent(run_target, options)
        rival = GradeDocument.model_validate(
            {**standing.model_dump(), "run": {"id": "down", "attempt": 90 + attempt}}
        )
        pace = random.Random(attempt)  # who starts first varies, the same way each time
        start = threading.Barrier(2)
        outcome: dict[str, str] = {}
        rival_thread = threading.Thread(
            target=publish_at,
            args=(start, pace.uniform(0, 0.015), rival, run_target, standing, options, outcome),
        )
        monkeypatch.setattr(
            triage_module, "triage", meet_then_decide(looked, start, pace.uniform(0, 0.015))
        )
        rival_thread.start()
        result = grade_request(GradeRequest(**base, regrade="all"), sleep=no_wait)
        rival_thread.join()
        won = result.published == {"replaced": 1}
        assert won != (outcome["other"] == "won"), (result.published, outcome)
        stood = consistent(run_target, options)
        if won:
            assert stood.run is not None and standing.run is not None and stood.gradable
            assert stood.run.attempt == standing.run.attempt + 1  # numbered on from it
        else:
            assert result.published == {"conflict": 1} and result.failures[0].run == "down"
            assert stood.to_bytes() == rival.to_bytes()
        seen["regrade" if won else "other"] += 1
    assert sum(seen.values()) == 10, seen


def publish_at(
    start: threading.Barrier,
    delay: float,
    document: GradeDocument,
    target: str,
    standing: GradeDocument,
    options: dict[str, Any],
    outcome: dict[str, str],
) -> None:
    """The other publisher: once both sides are ready, replace ``standing``."""
    start.wait(timeout=30)
    time.sleep(delay)
    try:
        publish(document, target, replaces=standing.digest, storage_options=options)
        outcome["other"] = "won"
    except PublishConflict:
        outcome["other"] = "conflict"


def meet_then_decide(looked: Any, start: threading.Barrier, delay: float) -> Any:
    """The triage step of the regrade, which waits for the other publisher
    once it has read the standing grade."""

    def triage(job: Any, stored: Any, policy: Any, *rest: Any) -> Any:
        decided = looked(job, stored, policy, *rest)
        start.wait(timeout=30)  # both have read the same standing grade
        time.sleep(delay)
        return decided

    return triage


def test_a_planted_grade_in_the_run_is_never_its_grade(tmp_path: Path) -> None:
    """With the default target (each run's own logs/verifier), a forged,
    valid grade of 1.0 planted there with reward files beside it is not the
    run's grade: the run is graded and its true grade replaces it. A grade
    the flow published there itself is kept, and a sweep with an explicit
    target is unaffected."""
    sweep = make_sweep(tmp_path / "s", {"fails": "fail", "ok": "pass"})
    logs = sweep / "fails" / "logs" / "verifier"
    logs.mkdir(parents=True)
    case = next(iter(json.loads((sweep / "fails" / "task.json").read_text())["cases"]))
    forged = grade_document(
        [{"id": case, "kind": "fail_to_pass", "verdict": "pass"}], run={"id": "fails"}
    )
    (logs / "grade.json").write_bytes(forged.to_bytes())
    (logs / "reward.txt").write_text("1.0\n")
    (logs / "reward.json").write_text('{"reward": 1.0}')
    result = grade_request(GradeRequest(sweep=str(sweep)), sleep=no_wait)
    assert result.distrusted == 1 and "over an untrusted grade" in result.headline()
    graded = GradeDocument.from_bytes((logs / "grade.json").read_bytes())
    assert graded.gradable and graded.reward == 0.0 and graded.attempts == ()
    assert (logs / "reward.txt").read_text() == "0.0\n"
    assert json.loads((logs / "reward.json").read_text()) == {"reward": 0.0}
    assert [item.path for item in graded.evidence] == ["rows.jsonl"]  # relative to the run
    # Graded by the flow itself: trusted, kept, nothing written.
    before = snapshot(sweep)
    again = grade_request(GradeRequest(sweep=str(sweep)), sleep=no_wait)
    assert again.distrusted == 0 and again.published == {"unchanged": 2}
    assert snapshot(sweep) == before
    # The evidence changed since: the standing grade is stale, so not trusted.
    (sweep / "ok" / "rows.jsonl").write_text((sweep / "ok" / "rows.jsonl").read_text() + "\n")
    stale = grade_request(GradeRequest(sweep=str(sweep)), sleep=no_wait)
    assert stale.distrusted == 1
