"""Sweep analytics: summaries, comparisons and stability over published grades."""

from __future__ import annotations

import itertools
import json
import math
import sys
from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import truereward as tr
from tests.support.graded_sweeps import (
    CODES,
    PLAN,
    document_for,
    publish_sweep,
    put_memory_sweep,
    record_for,
)
from tests.support.markdown import HOSTILE, as_read, code_spans, table_rows
from truereward.cli import main
from truereward.sweeps import (
    RunRecord,
    RunState,
    SweepNotFound,
    SweepSource,
    compare,
    compare_runs,
    grouped_records,
    paired_records,
    parse_grade,
    stability,
    summarize,
)
from truereward.sweeps.html import render_report
from truereward.sweeps.markdown import render_comparison, render_stability, render_summary


def check_plan_summary(summary: tr.sweeps.SweepSummary) -> None:
    assert (summary.runs, summary.gradable, summary.ungradable) == (6, 4, 2)
    assert summary.reward.count == 4 and summary.reward.mean == 0.75  # never (3 + 0 + 0) / 6
    assert (summary.reward.minimum, summary.reward.p50, summary.reward.maximum) == (0.0, 1.0, 1.0)
    assert [(item.code, item.blame, item.runs) for item in summary.refusals] == [
        ("CASE_NOT_GRADED", "grader", 1),
        ("EVIDENCE_MISSING", "run", 1),
    ]
    assert {item.blame: item.runs for item in summary.blame} == {"grader": 1, "run": 1}
    assert summary.attempts.total == 7 and summary.attempts.retried == 1
    assert summary.attempts.recovered == 1
    assert [(item.attempts, item.runs) for item in summary.attempts.by_count] == [(1, 5), (2, 1)]
    assert summary.schemes == {"gated-binary/1": 6}


def test_summary_of_a_local_sweep(tmp_path):
    root = publish_sweep(tmp_path / "nightly", PLAN)
    check_plan_summary(summarize(SweepSource(root).records()))
    check_plan_summary(summarize(SweepSource(root).records(strict=True)))
    check_plan_summary(summarize(SweepSource(f"file://{root}").records()))


def test_summary_of_a_memory_sweep_is_the_same(memory_root):
    source = SweepSource(put_memory_sweep(memory_root, PLAN))
    assert source.run_names() == sorted(PLAN)
    check_plan_summary(summarize(source.records()))


def test_summary_of_grade_documents_in_memory_is_the_same():
    documents = [document_for(run, outcome) for run, outcome in PLAN.items()]
    check_plan_summary(summarize(documents))
    check_plan_summary(summarize(iter(documents)))


def test_unreadable_grades_are_counted_apart_with_the_reason(tmp_path):
    root = tmp_path / "sweep"
    publish_sweep(root, {"ok": "pass"})
    good = json.loads((root / "ok" / "grade.json").read_text())
    bad = {
        "missing": None,
        "nan": b'{"schema_version": 1, "gradable": NaN}',
        "not-json": b"{",
        "claims-gradable": json.dumps({**good, "refusals": PLAN_REFUSAL}).encode(),
        "reward-on-refusal": json.dumps(
            {**good, "gradable": False, "refusals": PLAN_REFUSAL}
        ).encode(),
        "wrong-version": json.dumps({**good, "schema_version": 2}).encode(),
        "string-reward": json.dumps({**good, "reward": "1.0"}).encode(),
    }
    for run, content in bad.items():
        (root / run).mkdir()
        if content is not None:
            (root / run / "grade.json").write_bytes(content)
    (root / "dir-grade").mkdir()
    (root / "dir-grade" / "grade.json").mkdir()
    (root / ".hidden").mkdir()
    (root / "README.txt").write_text("not a run")
    summary = summarize(SweepSource(str(root)).records())
    assert (summary.runs, summary.gradable, summary.unreadable) == (9, 1, 8)
    assert summary.reward.count == 1 and summary.reward.mean == 1.0
    why = {item.run: item.why for item in summary.unreadable_runs}
    assert why["missing"] == "no grade.json"
    assert "refusals" in why["claims-gradable"]
    assert "carries a reward" in why["reward-on-refusal"]
    assert "schema_version" in why["wrong-version"]
    assert "reward" in why["string-reward"]
    assert "cannot read" in why["dir-grade"]
    assert ".hidden" not in why and "README.txt" not in why


PLAN_REFUSAL = [{"code": "EVIDENCE_MISSING", "blame": "run", "why": "x", "case": None}]


def test_strict_reading_refuses_what_the_view_does_not_look_at():
    data = document_for("r", "pass").to_bytes()
    doubled = data.replace(b'"gradable": true', b'"gradable": true, "gradable": true', 1)
    assert parse_grade(doubled, "r").state is RunState.GRADABLE
    strict = parse_grade(doubled, "r", strict=True)
    assert strict.state is RunState.UNREADABLE and "duplicate key" in (strict.problem or "")
    nan_in_row = data.replace(b'"duration_s": 0.0', b'"duration_s": NaN', 1)
    assert parse_grade(nan_in_row, "r", strict=True).state is RunState.UNREADABLE


def test_a_reward_no_fold_could_give_is_unreadable():
    data = document_for("r", "fail").to_bytes()
    assert b'"reward": 0.0' in data
    for reward in (b"1.5", b"-1.0"):
        record = parse_grade(data.replace(b'"reward": 0.0', b'"reward": ' + reward, 1), "r")
        assert record.state is RunState.UNREADABLE
        assert "outside what gated-binary/1 gives" in (record.problem or "")
    # In range but not what the detail folds to: only the strict reading folds again.
    tampered = data.replace(b'"reward": 0.0', b'"reward": 1.0', 1)
    assert parse_grade(tampered, "r").reward == 1.0
    strict = parse_grade(tampered, "r", strict=True)
    assert strict.state is RunState.UNREADABLE
    assert "reward: stored 1.0, expected 0.0" in (strict.problem or "")


def test_a_missing_sweep_is_an_error(tmp_path, memory_root):
    with pytest.raises(SweepNotFound, match="no such directory"):
        SweepSource(str(tmp_path / "absent")).run_names()
    (tmp_path / "file").write_text("x")
    with pytest.raises(SweepNotFound, match="not a directory"):
        SweepSource(str(tmp_path / "file")).run_names()
    with pytest.raises(SweepNotFound):
        SweepSource(memory_root + "/absent").run_names()


def test_an_empty_sweep_has_an_absent_reward_distribution(tmp_path):
    (tmp_path / "empty").mkdir()
    summary = summarize(SweepSource(str(tmp_path / "empty")).records())
    assert summary.runs == 0 and not summary.reward.present and summary.reward.mean is None
    assert "absent, not 0" in render_summary(summary)


# --- Summary invariants -------------------------------------------------------------

outcomes = st.sampled_from(["pass", "fail", "retried", *CODES, "unreadable"])


@given(st.lists(outcomes, max_size=30))
def test_summary_invariants(plan):
    records = [record_for(f"r{index}", outcome) for index, outcome in enumerate(plan)]
    summary = summarize(records)
    assert summary.runs == len(plan) == summary.gradable + summary.ungradable + summary.unreadable
    rewards = [record.reward for record in records if record.reward is not None]
    assert summary.reward.count == summary.gradable == len(rewards)
    assert sum(bucket.runs for bucket in summary.reward_histogram) == summary.gradable
    assert summary.retryable + summary.needs_fix == summary.grader_refused
    if rewards:
        assert summary.reward.mean == pytest.approx(sum(rewards) / len(rewards))
        assert summary.reward.minimum == min(rewards) and summary.reward.maximum == max(rewards)
    else:
        assert summary.reward.mean is None
    assert summary.unreadable == plan.count("unreadable")
    assert summary.ungradable == sum(plan.count(code) for code in CODES)
    assert sum(item.runs for item in summary.refusals) == summary.ungradable
    assert sum(item.runs for item in summary.attempts.by_count) == len(plan) - summary.unreadable
    assert summary.attempts.total == summary.runs - summary.unreadable + plan.count("retried")
    retried = [record.run for record in records if record.attempts > 1]
    assert summary.attempts.retried == len(retried)
    assert summary.retried_runs == sorted(retried)[:20]  # the first by id, whatever the order
    refused = [
        record.run
        for record in records
        if record.reward is None
        and record.refusals
        and all(item.blame == "grader" for item in record.refusals)
    ]
    assert summary.grader_refused == len(refused)
    assert summary.grader_refused_runs == sorted(refused)[:20]
    # The runs a summary names do not depend on the order they arrive in.
    assert summarize(reversed(records)) == summary


LARGEST = sys.float_info.max
#: Any reward a fold can give: weighted-sum/1 gives any finite number.
rewards = st.floats(allow_nan=False, allow_infinity=False)


def gradable_records(values: list[float]) -> list[RunRecord]:
    return [
        RunRecord(run=f"r{index}", state=RunState.GRADABLE, reward=value)
        for index, value in enumerate(values)
    ]


@given(st.lists(rewards, min_size=1, max_size=12))
@example([LARGEST, -LARGEST, 0.5])  # their span, high - low, is past the float range
@example([0.05, 0.1, 0.35, 0.95, 1.0])
def test_any_finite_rewards_are_bucketed_and_rendered(values: list[float]) -> None:
    summary = summarize(gradable_records(values))
    buckets = summary.reward_histogram
    assert sum(bucket.runs for bucket in buckets) == len(values)
    if set(values) <= {0.0, 1.0}:  # one bar a value
        assert [bucket.runs for bucket in buckets] == [values.count(0.0), values.count(1.0)]
    else:
        assert buckets[0].low <= min(values) and max(values) <= buckets[-1].high
        for before, after in itertools.pairwise(buckets):
            assert before.low <= before.high == after.low
        *inner, last = buckets
        for bucket in inner:
            assert bucket.runs == sum(bucket.low <= value < bucket.high for value in values)
        assert last.runs == sum(last.low <= value <= last.high for value in values)
    assert summary.reward.minimum == min(values) and summary.reward.maximum == max(values)
    assert render_summary(summary) and render_report(summary, title="Any rewards")


@given(st.lists(st.tuples(rewards, rewards), min_size=1, max_size=8))
@example([(LARGEST, -LARGEST)])
@example([(LARGEST, LARGEST), (-LARGEST, -LARGEST), (0.0, LARGEST), (0.0, -LARGEST)])
def test_a_comparison_of_any_rewards_has_finite_deltas_or_says_which_run_has_none(
    pairs: list[tuple[float, float]],
) -> None:
    base = gradable_records([before for before, _ in pairs])
    cand = gradable_records([after for _, after in pairs])
    past = [
        f"run r{index}: "
        for index, (before, after) in enumerate(pairs)
        if not math.isfinite(after - before)
    ]
    means = [float(sum(map(Fraction, side)) / len(pairs)) for side in zip(*pairs, strict=True)]
    if past or not math.isfinite(means[1] - means[0]):
        with pytest.raises(ArithmeticError) as raised:
            compare(base, cand)
        message = str(raised.value)
        assert any(message.startswith(run) for run in past) or "difference of means" in message
        return
    comparison = compare(base, cand)
    for change in [*comparison.regressions, *comparison.fixes]:
        assert change.delta == change.candidate - change.baseline
    assert comparison.reward_delta.mean == means[1] - means[0]
    assert render_comparison(comparison)


# --- Comparison ---------------------------------------------------------------------


def test_compare_puts_each_run_under_one_heading(tmp_path):
    base = publish_sweep(
        tmp_path / "base",
        {
            "same": "pass",
            "regressed": "pass",
            "fixed": "fail",
            "broke": "pass",
            "recovered": "CASE_NOT_GRADED",
            "still": "EVIDENCE_MISSING",
            "dropped": "pass",
        },
    )
    cand = publish_sweep(
        tmp_path / "cand",
        {
            "same": "pass",
            "regressed": "fail",
            "fixed": "pass",
            "broke": "GRADER_TIMEOUT",
            "recovered": "pass",
            "still": "EVIDENCE_MISSING",
            "new": "fail",
        },
    )
    comparison = compare_runs(paired_records(SweepSource(base), SweepSource(cand)))
    assert [(c.run, c.baseline, c.candidate, c.delta) for c in comparison.regressions] == [
        ("regressed", 1.0, 0.0, -1.0)
    ]
    assert [(c.run, c.delta) for c in comparison.fixes] == [("fixed", 1.0)]
    assert comparison.unchanged == 1 and comparison.paired == 6
    [broke] = comparison.newly_ungradable
    assert (broke.run, broke.state, broke.codes, broke.blame, broke.reward) == (
        "broke",
        "ungradable",
        ["GRADER_TIMEOUT"],
        ["grader"],
        1.0,
    )
    assert [(item.run, item.reward) for item in comparison.newly_gradable] == [("recovered", 1.0)]
    assert comparison.still_ungradable == ["still"]
    assert (comparison.added, comparison.removed) == (["new"], ["dropped"])
    # Means over each side's gradable runs only: 4 of the baseline's 5, 3 of the candidate's 5.
    assert comparison.baseline.reward.mean == pytest.approx(4 / 5)
    assert comparison.candidate.reward.mean == pytest.approx(3 / 5)
    assert comparison.reward_delta.mean == pytest.approx(-0.2)
    # Over the three runs gradable on both sides: (1, 1, 0) -> (1, 0, 1).
    assert comparison.paired_reward_delta.mean == pytest.approx(0.0)
    text = render_comparison(comparison, base, cand)
    newly = text.index("### Newly ungradable")
    assert text.index("| broke |", newly) > newly
    assert "| broke |" not in text[text.index("### Regressions") : text.index("### Fixes")]


def test_deltas_are_absent_when_a_side_has_no_gradable_run():
    base = [record_for("a", "EVIDENCE_MISSING"), record_for("b", "GRADER_TIMEOUT")]
    cand = [record_for("a", "pass"), record_for("b", "fail")]
    comparison = compare(base, cand)
    assert not comparison.reward_delta.present and comparison.reward_delta.mean is None
    assert not comparison.paired_reward_delta.present
    assert comparison.regressions == [] and comparison.fixes == []
    assert {item.run for item in comparison.newly_gradable} == {"a", "b"}
    assert "a side has no gradable run" in render_comparison(comparison)


@pytest.mark.slow
@given(
    st.dictionaries(
        st.sampled_from([f"r{i}" for i in range(12)]),
        st.tuples(outcomes | st.none(), outcomes | st.none()),
    )
)
def test_a_comparison_never_counts_an_ungradable_run_as_zero(plan):
    base = [record_for(run, pair[0]) for run, pair in plan.items() if pair[0] is not None]
    cand = [record_for(run, pair[1]) for run, pair in plan.items() if pair[1] is not None]
    comparison = compare(base, cand)
    reward = {
        side: {r.run: r.reward for r in records} for side, records in (("b", base), ("c", cand))
    }
    headings: dict[str, list[str]] = {
        "regressions": [item.run for item in comparison.regressions],
        "fixes": [item.run for item in comparison.fixes],
        "newly_ungradable": [item.run for item in comparison.newly_ungradable],
        "newly_gradable": [item.run for item in comparison.newly_gradable],
        "still_ungradable": comparison.still_ungradable,
        "added": comparison.added,
        "removed": comparison.removed,
    }
    placed = [run for runs in headings.values() for run in runs]
    assert len(placed) == len(set(placed))
    assert len(placed) + comparison.unchanged == len(
        [p for p in plan.values() if p != (None, None)]
    )
    for run in headings["regressions"] + headings["fixes"]:
        assert reward["b"][run] is not None and reward["c"][run] is not None
    for item in comparison.regressions:
        assert item.candidate < item.baseline
    for run in headings["newly_ungradable"]:
        assert reward["b"][run] is not None and reward["c"][run] is None
    for run in headings["newly_gradable"]:
        assert reward["b"][run] is None and reward["c"][run] is not None
    base_rewards = [value for value in reward["b"].values() if value is not None]
    cand_rewards = [value for value in reward["c"].values() if value is not None]
    if base_rewards and cand_rewards:
        expected = sum(cand_rewards) / len(cand_rewards) - sum(base_rewards) / len(base_rewards)
        assert comparison.reward_delta.mean == pytest.approx(expected)
    else:
        assert not comparison.reward_delta.present


def test_a_sweep_naming_a_run_twice_cannot_be_compared():
    with pytest.raises(ValueError, match="twice"):
        compare([record_for("a", "pass"), record_for("a", "fail")], [])


# --- Stability ----------------------------------------------------------------------


def flaky_case_document(run: str, fix: str, guard: str = "pass") -> tr.GradeDocument:
    rows = [
        {"id": "t::fix", "kind": "fail_to_pass", "verdict": fix},
        {"id": "t::guard", "kind": "pass_to_pass", "verdict": guard},
    ]
    if guard == "ungradable":
        rows[1]["code"] = "CASE_NOT_GRADED"
    return tr.grade_document(rows, run={"id": run})


def test_stability_across_three_sweeps(tmp_path):
    sweeps = [
        {
            "steady": "pass",
            "flaky": "pass",
            "flips": "pass",
            "never": "GRADER_TIMEOUT",
            "one": "pass",
        },
        {"steady": "pass", "flaky": "fail", "flips": "EVIDENCE_MISSING", "never": "GRADER_TIMEOUT"},
        {"steady": "pass", "flaky": "pass", "flips": "pass", "never": "CASE_NOT_GRADED"},
    ]
    roots = [publish_sweep(tmp_path / f"s{index}", plan) for index, plan in enumerate(sweeps)]
    report = stability(grouped_records([SweepSource(root) for root in roots]), sweeps=3)
    assert (report.sweeps, report.runs, report.stable) == (3, 5, 1)
    assert [(item.run, item.rewards) for item in report.flaky_runs] == [("flaky", [1.0, 0.0, 1.0])]
    assert [(item.run, item.states) for item in report.flips] == [
        ("flips", ["gradable", "ungradable", "gradable"])
    ]
    assert (report.always_ungradable, report.single, report.incomplete) == (1, 1, 1)
    assert [(c.run, c.case, c.passed, c.failed) for c in report.flaky_cases] == [
        ("flaky", "t::fix", 2, 1)
    ]
    text = render_stability(report, roots)
    assert "flip gradability" in text and "| flaky | t::fix | 2 | 1 |" in text


def test_run_ids_and_labels_show_as_they_are():
    # Run ids in tables (regressions, unreadable grades) and code spans (the
    # runs still refused for the grader's reasons), labels in code spans. A
    # grade's run id holds no backslash or line break; a label or the name
    # of an unreadable grade may.
    ids = ["`x|y`", "<!--", "a|b`c`"]
    base = [record_for(name, "pass") for name in ids]
    cand = [record_for(name, "fail") for name in ids]
    text = render_comparison(compare(base, cand), HOSTILE[0], HOSTILE[3])
    assert code_spans(text) == [as_read(HOSTILE[0]), as_read(HOSTILE[3])]
    assert sorted(row[0] for row in table_rows(text)) == sorted(ids)
    refused = [record_for(name, "GRADER_TIMEOUT") for name in ids]
    unreadable = [RunRecord.unreadable(name, f"{name}: broken") for name in HOSTILE]
    document = json.loads(document_for("forged", "pass").to_bytes())
    forged = parse_grade(json.dumps({**document, "scheme": HOSTILE[3]}).encode(), "forged")
    text = render_summary(summarize([*refused, *unreadable, forged]))
    assert {*ids, as_read(HOSTILE[3])} <= set(code_spans(text))  # a forged grade's scheme too
    assert sorted(table_rows(text.split("### Unreadable grades")[1])) == sorted(
        [as_read(name), as_read(f"{name}: broken")] for name in HOSTILE
    )


def test_ungradable_verdicts_never_make_a_case_flaky():
    docs = [
        flaky_case_document("r", "pass", "pass"),
        flaky_case_document("r", "pass", "ungradable"),
    ]
    records = [RunRecord.from_document(doc) for doc in docs]
    report = stability([("r", records)])
    assert report.flaky_cases == [] and len(report.flips) == 1 and report.flaky_runs == []


def test_stability_needs_two_sweeps():
    with pytest.raises(ValueError, match="two sweeps"):
        stability([("r", [record_for("r", "pass")])])
    with pytest.raises(ValueError, match="two sweeps"):
        stability([])


# --- Command line -------------------------------------------------------------------


def test_cli_summary_markdown_and_json(tmp_path, capsys):
    root = publish_sweep(tmp_path / "nightly", PLAN)
    assert main(["sweep", "summary", root]) == 0
    text = capsys.readouterr().out
    assert "6 runs: 4 gradable, 2 ungradable, 0 unreadable." in text
    assert "| `EVIDENCE_MISSING` | run | 1 | 1 |" in text
    assert main(["sweep", "summary", root, "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["summary"]["reward"]["mean"] == 0.75
    assert payload["summary"]["gradable"] == 4


def test_cli_summary_of_a_memory_url(memory_root, capsys):
    put_memory_sweep(memory_root, PLAN)
    assert main(["sweep", "summary", memory_root, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["runs"] == 6


def weighted_sum_sweep(root, weights: dict[str, float]) -> str:
    """A sweep of real grades: each run one passing case weighted so, under
    weighted-sum/1, so its reward is the weight."""
    for run, weight in weights.items():
        spec = tr.TaskSpec.of(
            {
                "cases": [{"id": "a", "kind": "fail_to_pass", "weight": weight}],
                "scoring": {"scheme": "weighted-sum/1"},
            }
        )
        rows = [{"id": "a", "kind": "fail_to_pass", "verdict": "pass"}]
        document = tr.grade_document(rows, case_set=spec, run={"id": run, "sweep": root.name})
        tr.publish(document, root / run)
    return str(root)


def test_cli_sweeps_of_rewards_near_the_float_range(tmp_path, capsys):
    # weighted-sum/1 gives any finite reward; the summary's histogram used
    # to take high - low (inf) and end in an internal error, as did compare.
    base = weighted_sum_sweep(tmp_path / "base", {"a": 1e308, "b": -1e308, "c": 0.5})
    cand = weighted_sum_sweep(tmp_path / "cand", {"a": -1e308, "b": 1e308, "c": 0.5})
    assert main(["sweep", "summary", base, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert summary["gradable"] == 3 and summary["reward"]["maximum"] == 1e308
    assert sum(bucket["runs"] for bucket in summary["reward_histogram"]) == 3
    assert main(["sweep", "report", base, "--output", str(tmp_path / "report.html")]) == 0
    assert (tmp_path / "report.html").stat().st_size > 0
    capsys.readouterr()
    assert main(["sweep", "compare", base, cand]) == 2
    assert capsys.readouterr().err.startswith(
        "truereward sweep: no comparison: run a: its reward went from 1e+308 to -1e+308"
    )
    assert main(["sweep", "report", cand, "--baseline", base, "-o", str(tmp_path / "c.html")]) == 2
    assert not (tmp_path / "c.html").exists()


def test_cli_compare_gates(tmp_path, capsys):
    base = publish_sweep(tmp_path / "base", {"a": "pass", "b": "pass"})
    only_ungradable = publish_sweep(tmp_path / "c1", {"a": "pass", "b": "EVIDENCE_MISSING"})
    regressed = publish_sweep(tmp_path / "c2", {"a": "fail", "b": "pass"})
    # A newly ungradable run is not a regression.
    assert main(["sweep", "compare", base, only_ungradable, "--fail-on-regression"]) == 0
    assert "Newly ungradable" in capsys.readouterr().out
    assert main(["sweep", "compare", base, only_ungradable, "--fail-on-newly-ungradable"]) == 1
    captured = capsys.readouterr()
    assert "gate failed: 1 newly ungradable" in captured.err
    assert main(["sweep", "compare", base, regressed, "--fail-on-regression", "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["gate"] == {"failed": True, "reasons": ["1 regressions"]}
    assert payload["comparison"]["regressions"][0]["run"] == "a"
    assert main(["sweep", "compare", base, regressed]) == 0


def test_cli_stability(tmp_path, capsys):
    one = publish_sweep(tmp_path / "one", {"a": "pass", "b": "pass"})
    two = publish_sweep(tmp_path / "two", {"a": "fail", "b": "pass"})
    assert main(["sweep", "stability", one, two, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [item["run"] for item in payload["stability"]["flaky_runs"]] == ["a"]
    assert main(["sweep", "stability", one]) == 2
    assert "at least two sweeps" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv",
    [
        ["sweep", "summary", "{missing}"],
        ["sweep", "compare", "{missing}", "{missing}"],
        ["sweep", "summary", "{missing}", "--storage-option", "novalue"],
    ],
)
def test_cli_bad_input_exits_2_without_a_traceback(tmp_path, capsys, argv):
    missing = str(tmp_path / "missing")
    assert main([part.replace("{missing}", missing) for part in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("truereward sweep:") and "Traceback" not in err


def test_a_planted_fifo_or_an_oversized_grade_is_unreadable_not_a_hang(tmp_path, monkeypatch):
    import os

    from truereward.sweeps import source

    root = tmp_path / "sweep"
    publish_sweep(root, {"big": "pass", "ok": "pass"})
    (root / "fifo").mkdir()
    os.mkfifo(root / "fifo" / "grade.json")
    size = (root / "ok" / "grade.json").stat().st_size
    monkeypatch.setattr(source, "MAX_GRADE_BYTES", size)
    (root / "big" / "grade.json").write_bytes(b" " * (size + 1))
    records = {record.run: record for record in SweepSource(str(root)).records()}
    assert records["ok"].state is RunState.GRADABLE
    assert records["fifo"].problem == "grade.json: cannot read: a FIFO, not a regular file"
    assert "more than the" in (records["big"].problem or "")


grade_fields = st.fixed_dictionaries(
    {},
    optional={
        "schema_version": st.sampled_from([1, 2, "1", None]),
        "scheme": st.sampled_from(["gated-binary/1", 3]),
        "gradable": st.booleans() | st.none() | st.just(1),
        "reward": st.none() | st.floats() | st.just("1.0") | st.booleans(),
        "refusals": st.lists(
            st.fixed_dictionaries(
                {"code": st.sampled_from(["X", "", "CASE_INVALID"])},
                optional={"blame": st.sampled_from(["run", "grader", "nobody"])},
            ),
            max_size=2,
        )
        | st.just("none"),
        "run": st.none() | st.fixed_dictionaries({}, optional={"attempt": st.integers(-1, 3)}),
        "attempts": st.lists(st.integers(), max_size=2) | st.just({}),
        "detail": st.lists(
            st.fixed_dictionaries(
                {"id": st.text(max_size=3), "verdict": st.sampled_from(["pass", "fail", "x"])}
            ),
            max_size=2,
        ),
    },
)


@given(grade_fields | st.binary(max_size=40), st.booleans(), st.booleans())
def test_parsing_garbage_never_raises_and_never_invents_a_reward(value, strict, with_cases):
    data = value if isinstance(value, bytes) else json.dumps(value).encode()
    record = parse_grade(data, "r", strict=strict, with_cases=with_cases)
    assert record.run == "r"
    if record.state is RunState.GRADABLE:
        assert isinstance(record.reward, float) and not record.refusals
    else:
        assert record.reward is None
    if record.state is RunState.UNREADABLE:
        assert record.problem and record.problem.startswith("grade.json")
