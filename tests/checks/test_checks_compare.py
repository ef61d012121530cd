"""Comparing two result files: regressions, improvements, score changes
beyond a tolerance, added and removed cases; duplicate ids are an error."""

from __future__ import annotations

import json

import pytest

from tests.support.markdown import HOSTILE, as_read, code_spans, table_rows
from truereward.checks.compare import BadResults, compare, load_results, render_markdown


def results(tmp_path, name, cases):
    path = tmp_path / name
    path.write_text(json.dumps({"summary": {"passRate": 0.123}, "cases": cases}))
    return load_results(str(path))


def c(case_id, passed, score, **extra):
    return {"id": case_id, "passed": passed, "score": score, "checks": [], **extra}


def test_categories(tmp_path):
    base = results(
        tmp_path,
        "base.json",
        [
            c("reg", True, 1.0),
            c("imp", False, 0.2),
            c("up", False, 0.3),
            c("down", True, 0.9),
            c("same", True, 1.0),
            c("gone", True, 1.0),
            c("err", False, 0.1),
        ],
    )
    current = results(
        tmp_path,
        "cur.json",
        [
            c("reg", False, 0.4),
            c("imp", True, 0.9),
            c("up", False, 0.6),
            c("down", True, 0.8),
            c("same", True, 1.0),
            c("new", True, 1.0),
            c("err", False, None, error={"message": "bad"}),
        ],
    )
    result = compare(base, current)
    assert [d.id for d in result.regressions] == ["reg"]
    assert result.regressions[0].score_delta == -0.6
    assert [d.id for d in result.improvements] == ["imp"]
    assert [(d.id, d.score_delta) for d in result.score_changes] == [("down", -0.1), ("up", 0.3)]
    assert (result.unchanged, result.added_ids, result.removed_ids) == (2, ["new"], ["gone"])
    assert result.errored_ids == ["err"]
    assert result.has_regressions
    # pass rates come from the cases, not the summary
    assert (result.baseline_pass_rate, result.current_pass_rate) == (4 / 7, 4 / 7)
    document = result.to_json()
    for key in (
        "regressions",
        "improvements",
        "score_changes",
        "unchanged",
        "added_ids",
        "removed_ids",
        "baseline_pass_rate",
        "current_pass_rate",
        "pass_rate_delta",
        "has_regressions",
    ):
        assert key in document
    markdown = render_markdown(result)
    assert (
        "- Regressions: **1**" in markdown
        and "| reg | 1.0 → 0.4 (-0.6) | yes | **no** |" in markdown
    )
    assert "## Removed cases\n\n- `gone`" in markdown


def test_case_ids_show_as_they_are(tmp_path):
    # Each kind of change once: a table row (regression), code spans (a score
    # change, a new and a removed case).
    reg, changed, new, gone = HOSTILE
    base = results(tmp_path, "b.json", [c(reg, True, 1.0), c(changed, True, 0.9), c(gone, True, 1)])
    current = results(
        tmp_path, "c.json", [c(reg, False, 0.4), c(changed, True, 0.8), c(new, True, 1)]
    )
    markdown = render_markdown(compare(base, current))
    assert [row[0] for row in table_rows(markdown)] == [as_read(reg)]
    assert code_spans(markdown) == [as_read(changed), as_read(new), as_read(gone)]


def test_tolerance_is_exact(tmp_path):
    base = results(tmp_path, "b.json", [c("a", True, 0.3), c("b", True, 0.5)])
    current = results(tmp_path, "c.json", [c("a", True, 0.4), c("b", True, 0.5001)])
    assert [d.id for d in compare(base, current).score_changes] == ["b", "a"]  # by delta
    # 0.4 - 0.3 is 0.10000000000000003 in floats: still not beyond 0.1
    loose = compare(base, current, tolerance=0.1)
    assert loose.score_changes == [] and loose.unchanged == 2
    assert [d.id for d in compare(base, current, tolerance=0.0001).score_changes] == ["a"]
    assert not compare(base, current, tolerance=0.1).has_regressions
    with pytest.raises(ValueError, match="tolerance"):
        compare(base, current, tolerance=-1)


def test_duplicate_ids_are_an_error(tmp_path):
    path = tmp_path / "dup.json"
    path.write_text(json.dumps({"cases": [c("a", True, 1), c("b", True, 1), c("a", False, 0)]}))
    with pytest.raises(
        BadResults, match=r"dup.json: 1 duplicate case id\(s\): 'a' \(cases\[0\] and cases\[2\]\)"
    ):
        load_results(str(path))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[]", "not a result file"),
        ('{"cases": [{"id": "a", "passed": "yes", "score": 1}]}', "cases[0]: passed"),
        ('{"cases": [{"id": "a", "passed": true}]}', "cases[0]: score"),
        ('{"cases": [{"id": true, "passed": true, "score": 1}]}', "cases[0]: id"),
        ('{"cases": [], "x": NaN}', "NaN"),
        ("{", "invalid JSON"),
    ],
)
def test_bad_result_files(tmp_path, body, message):
    path = tmp_path / "bad.json"
    path.write_text(body)
    with pytest.raises(BadResults, match=r"bad\.json") as raised:
        load_results(str(path))
    assert message in str(raised.value)
    with pytest.raises(BadResults, match="cannot read"):
        load_results(str(tmp_path / "absent.json"))


def test_integer_ids_from_ai_eval_forge_pair_with_text(tmp_path):
    base = results(tmp_path, "b.json", [c(5, True, 1.0)])
    current = results(tmp_path, "c.json", [c("5", False, 0.0)])
    assert [d.id for d in compare(base, current).regressions] == ["5"]
