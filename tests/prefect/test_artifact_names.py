"""The flow's artifacts as people find them: keys that say the sweep, the
target and the part; a report link a browser opens (a presigned URL for a
page on S3, fetched here from moto's server)."""

from __future__ import annotations

import json
import re
import urllib.request
from typing import Any

import pytest

from tests.conftest import s3_options
from tests.support.markdown import code_blocks
from truereward.grading import GradeRequest
from truereward.prefect.artifacts import artifact_key, render_regrade, report_link
from truereward.util.target import Target

KEY = re.compile(r"^[a-z0-9-]+$")  # what Prefect accepts in an artifact key


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"sweep": "samples/nightly"}, "grade-run-nightly-summary"),
        (
            {"sweep": "samples/nightly", "target": "out/graded"},
            "grade-run-nightly-to-out-graded-summary",
        ),
        (
            {"sweep": "s3://runs/2026/nightly", "target": "s3://grades/team-a/nightly"},
            "grade-run-nightly-to-grades-team-a-nightly-summary",
        ),
        ({"runs": ["a/r1", "a/r2"], "sweep_name": "Nightly Big"}, "grade-run-nightly-big-summary"),
        ({"runs": ["a/r1"]}, "grade-run-runs-summary"),
    ],
)
def test_keys_say_the_sweep_the_target_and_the_part(fields: dict[str, Any], expected: str) -> None:
    key = artifact_key(GradeRequest(**fields), None, "summary")
    assert key == expected and KEY.match(key)


def test_two_targets_of_one_sweep_have_two_keys_and_a_long_target_keeps_its_end() -> None:
    one = artifact_key(GradeRequest(sweep="n", target="s3://b/team-a/graded"), None, "runs")
    two = artifact_key(GradeRequest(sweep="n", target="s3://b/team-b/graded"), None, "runs")
    assert one != two
    deep = "s3://bucket/" + "x" * 200 + "/the-end"
    key = artifact_key(GradeRequest(sweep="n", target=deep), None, "runs")
    assert key.endswith("-the-end-runs") and len(key) < 80 and KEY.match(key)
    block = Target(url="s3://blocked/graded")  # a target block's URL wins over none
    assert (
        artifact_key(GradeRequest(sweep="n"), block, "runs") == "grade-run-n-to-blocked-graded-runs"
    )
    assert (
        artifact_key(GradeRequest(sweep="n"), None, "summary", flow="grade-sweep")
        == "grade-sweep-n-summary"
    )


def test_a_local_report_link_is_a_file_url(tmp_path) -> None:
    page = tmp_path / "sweep-report.html"
    assert report_link(str(page), None, GradeRequest(sweep="n")) == page.as_uri()


def test_a_report_on_s3_gets_a_presigned_url_a_browser_opens(
    s3_endpoint: str, s3_client: Any
) -> None:
    s3_client.create_bucket(Bucket="reports")
    s3_client.put_object(Bucket="reports", Key="n/sweep-report.html", Body=b"<html>page</html>")
    target = Target(url="s3://reports/n", storage_options=s3_options(s3_endpoint))
    where = "s3://reports/n/sweep-report.html"
    link = report_link(where, target, GradeRequest(sweep="n", target="s3://reports/n"))
    assert link.startswith(f"{s3_endpoint}/reports/n/sweep-report.html?") and "Signature" in link
    with urllib.request.urlopen(link, timeout=30) as answer:  # no credentials: the link's own
        assert answer.read() == b"<html>page</html>"
    # Anonymous access signs nothing: a link without a signature, never a traceback.
    anonymous = Target(
        url="s3://reports/n", storage_options={"anon": True, "endpoint_url": s3_endpoint}
    )
    plain = report_link(where, anonymous, GradeRequest(sweep="n"))
    assert "Signature" not in plain and plain.split("?")[0] in (where, link.split("?")[0])


def test_the_regrade_artifact_lists_apart_the_runs_that_need_a_fix(tmp_path) -> None:
    from tests.support.sweeps import make_sweep
    from truereward.grading import grade_request

    sweep = make_sweep(tmp_path / "nightly", {"ok": "pass", "down": "never", "cases": "pass"})
    spec = sweep / "cases" / "task.json"
    data = json.loads(spec.read_text())
    data["cases"]["tests/test_absent.py::test_never_ran"] = "pass_to_pass"
    spec.write_text(json.dumps(data))
    request = GradeRequest(sweep=str(sweep), target=str(tmp_path / "out"), retry_delay_seconds=0)
    result = grade_request(request, sleep=lambda _: None)
    text = render_regrade(result, request, "grade-run/local")
    healing, fixing = text.split("## Needing a fix")
    assert "## Grading again may heal them: 1" in healing and "| down |" in healing
    assert '"regrade": "grader-refusals"' in healing and "cases" not in healing.split("```")[0]
    assert fixing.startswith(" of the task definition or the reader: 1")
    assert "| cases | CASES_MISSING | CASES_MISSING: the task definition" in fixing
    assert '"regrade": "needing-fix"' in fixing
    # The commands are code blocks, read back whole.
    commands = code_blocks(text)
    assert [info for info, _ in commands] == ["bash"] * 3
    assert commands[0][1].startswith("prefect deployment run 'grade-run/local'")


def test_the_regrade_artifact_s_commands_stay_whole_whatever_the_path(tmp_path) -> None:
    from tests.support.sweeps import make_sweep
    from truereward.grading import grade_request
    from truereward.grading.commands import deployment_command, local_command, regrade_request

    # A directory with a line of three backticks in its name, above the sweep.
    sweep = make_sweep(tmp_path / "a\n```\nb" / "nightly", {"ok": "pass", "down": "never"})
    request = GradeRequest(sweep=str(sweep), target=str(tmp_path / "out"), retry_delay_seconds=0)
    text = render_regrade(grade_request(request, sleep=lambda _: None), request, "grade-run/local")
    again = regrade_request(request)
    assert code_blocks(text) == [
        ("bash", deployment_command(again, "grade-run/local") + "\n"),
        ("bash", local_command(again) + "\n"),  # the path's newlines as they are
    ]
