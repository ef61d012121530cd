"""``truereward sweep report``: the HTML page, its SVG charts, the command, and
the page as headless Chromium renders it, checked number by number against
the JSON of ``sweep summary``, ``sweep retries`` and ``sweep compare``."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import struct
import tempfile
import zlib
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.support.graded_sweeps import (
    PLAN,
    document_for,
    publish_sweep,
    put_memory_sweep,
    record_for,
)
from tests.support.markdown import table_rows
from tests.support.sweeps import make_sweep
from tests.support.terminal import acted_on
from truereward.cli import main
from truereward.grading import GradeRequest, grade_request
from truereward.sweeps import (
    RetriedRun,
    RetriesListing,
    RetriesTally,
    RunRecord,
    RunState,
    SweepSource,
    compare,
    render_report,
    retried_runs,
    summarize,
)
from truereward.sweeps.charts import COLOURS, Bar, bar_chart
from truereward.sweeps.html import LIMIT
from truereward.sweeps.markdown import render_comparison
from truereward.sweeps.record import RefusalNote

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

EVIL_RUN = "<script>alert('run')</script>&\"q\""
EVIL_WHY = '<img src=x onerror=alert(1)> & "it\'s" </td></tr> \x1b[2J\u202eevil'


# --- Reading a page back ------------------------------------------------------------

#: Elements without an end tag.
VOID = {"meta", "br", "img", "hr", "input", "link"}
#: Text there is not a number of the page: the caller's title, code-like text
#: (run ids, codes, locations, commands), the stylesheet, chart titles, the
#: time the page was made.
NOT_NUMBERS = {"style", "title", "code", "pre", "h1", "time"}


class Page(HTMLParser):
    """The parts of a report a test looks at: every element's tag, every
    ``data-metric`` element (name, ``data-value``, text), every ``data-run``,
    and the text that is outside both numbers and code-like elements."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.style = ""
        self.metrics: list[dict[str, Any]] = []
        self.runs: list[str] = []
        self.loose_text: list[str] = []
        self._stack: list[tuple[str, bool]] = []  # (tag, text there is exempt)
        self._open: list[dict[str, Any]] = []
        self.feed(text)
        self.close()

    def _exempt(self) -> bool:
        return any(exempt for _, exempt in self._stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        found = dict(attrs)
        self.attributes.update(found)
        if found.get("data-run") is not None:
            self.runs.append(str(found["data-run"]))
        if tag in VOID:
            return
        metric = found.get("data-metric")
        exempt = (
            tag in NOT_NUMBERS or "why" in (found.get("class") or "").split() or metric is not None
        )
        self._stack.append((tag, exempt))
        if metric is not None:
            self._open.append(
                {"metric": metric, "value": found.get("data-value"), "text": "", "depth": 0}
            )
        for item in self._open:
            item["depth"] += 1

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        assert self._stack and self._stack[-1][0] == tag, (tag, self._stack[-3:])
        self._stack.pop()
        for item in list(self._open):
            item["depth"] -= 1
            if item["depth"] == 0:
                self._open.remove(item)
                self.metrics.append(item)

    def handle_data(self, data: str) -> None:
        if self._stack and self._stack[-1][0] == "style":
            self.style += data
        for item in self._open:
            item["text"] += data
        if not self._exempt():
            self.loose_text.append(data)


#: The elements the report is made of; anything else came from a grade.
OUR_TAGS = {
    *("html", "head", "meta", "title", "style", "body", "header", "footer", "section"),
    *("h1", "h2", "h3", "p", "div", "span", "code", "pre", "br", "ul", "li"),
    *("table", "thead", "tbody", "tr", "th", "td", "svg", "text", "rect", "line"),
    *("figure", "figcaption", "tspan", "time"),
}


def metrics_of(page: Page) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for item in page.metrics:
        found.setdefault(item["metric"], []).append(item)
    return found


def check_number(metric: str, expected: Any, text: str, value: str | None) -> None:
    """A number read back from the page (its text, its data-value) is the
    number the JSON has; an absent one is a dash, never 0."""
    text = text.strip()
    if expected is None:
        assert (text, value) == ("—", None), metric
        return
    assert isinstance(expected, int | float) and not isinstance(expected, bool), (metric, expected)
    assert value is not None, metric
    if isinstance(expected, int):
        assert (text, int(value)) == (str(expected), expected), metric
    else:
        assert float(value) == expected, metric
        assert float(text) == pytest.approx(expected, abs=5e-5), metric


KEYED = {"refusals": 2, "blame": 1, "by_count": 1}


def resolve(node: Any, path: str, limit: int) -> Any:
    """The value a metric name points at in a command's JSON: a dotted path;
    ``refusals.<code>.<blame>``, ``blame.<blame>`` and ``by_count.<n>``
    select by key, digits by index; a list is its length, a delta its mean;
    ``<list>.more`` is how many items past ``limit``."""
    if path.startswith("schemes."):
        return node["schemes"][path.removeprefix("schemes.")]
    if path == "unreadable_runs.more":
        return node["unreadable"] - len(node["unreadable_runs"])
    parts = path.split(".")
    name = ""
    index = 0
    while index < len(parts):
        part = parts[index]
        if part == "more":
            assert index == len(parts) - 1 and isinstance(node, list), path
            return len(node) - min(limit, len(node))
        if isinstance(node, dict):
            node, name = node[part], part
            index += 1
        elif name in KEYED:
            keys = parts[index : index + KEYED[name]]
            fields = {"refusals": ("code", "blame"), "blame": ("blame",), "by_count": ("attempts",)}
            [node] = [item for item in node if [str(item[field]) for field in fields[name]] == keys]
            name = ""
            index += len(keys)
        else:
            node, name = node[int(part)], ""
            index += 1
    if isinstance(node, list):
        return len(node)
    if isinstance(node, dict) and set(node) == {"present", "mean"}:
        return node["mean"]
    return node


def expected_for(metric: str, jsons: dict[str, Any], limit: int) -> Any:
    if metric == "retries.more":
        return jsons["retries"]["listed"] - min(limit, jsons["retries"]["listed"])
    for prefix in ("comparison", "retries"):
        if metric.startswith(prefix + "."):
            return resolve(jsons[prefix], metric.removeprefix(prefix + "."), limit)
    return resolve(jsons["summary"], metric, limit)


def check_against(
    found: list[tuple[str, str, str | None]], jsons: dict[str, Any], limit: int
) -> set[str]:
    """Every (metric, text, data-value) agrees with the JSON; the names seen."""
    assert found, "the page shows numbers"
    for metric, text, value in found:
        check_number(metric, expected_for(metric, jsons, limit), text, value)
    return {metric for metric, _, _ in found}


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


# --- The renderer -------------------------------------------------------------------


def gradable(run: str, reward: float) -> RunRecord:
    """A record as read from a grade (a run id from a directory name is not
    checked the way a document's run id is)."""
    return RunRecord(run=run, state=RunState.GRADABLE, reward=reward, scheme="gated-binary/1")


def evil_inputs() -> tuple[Any, list[RetriedRun], RetriesTally, Any]:
    records = [
        record_for("ok", "pass"),
        RunRecord(
            run=EVIL_RUN,
            state=RunState.UNGRADABLE,
            scheme="gated-binary/1",
            refusals=(RefusalNote("EVIDENCE_UNREADABLE", "grader", EVIL_WHY),),
            attempts=2,
        ),
        RunRecord.unreadable(f"{EVIL_RUN}-unreadable", EVIL_WHY),
    ]
    tally = RetriesTally()
    lines = list(retried_runs(records, tally))
    base = [gradable(EVIL_RUN, 1.0), record_for("ok", "fail")]
    comparison = compare(base, [records[0], gradable(EVIL_RUN, 0.0)])
    return summarize(records), lines, tally, comparison


def test_text_from_grades_is_escaped_in_text_and_attributes():
    summary, lines, tally, comparison = evil_inputs()
    page_text = render_report(
        summary,
        lines,
        tally,
        comparison,
        title=f"Sweep report: {EVIL_RUN}",
        sweep=EVIL_RUN,
        baseline=EVIL_RUN,
        regrade=[f"grade {EVIL_RUN}"],
    )
    assert "<script" not in page_text.lower() and "<img" not in page_text
    assert "&lt;script&gt;alert(&#x27;run&#x27;)&lt;/script&gt;&amp;&quot;q&quot;" in page_text
    page = Page(page_text)  # a stray </td></tr> from a reason would break the nesting here
    assert page.tags <= OUR_TAGS, page.tags - OUR_TAGS
    assert EVIL_RUN in page.runs and f"{EVIL_RUN}-unreadable" in page.runs
    text = "".join(item["text"] for item in page.metrics) + "".join(page.loose_text)
    assert "alert" not in text  # the run ids and reasons are in code and why elements ...
    raw = re.sub(r"<[^>]+>", "", page_text)
    assert raw.count("&lt;img src=x onerror=alert(1)&gt;") >= 2  # ... shown as text
    # An escape sequence or a bidi override in a reason is shown, never acted on.
    assert not any(map(acted_on, page_text))
    assert raw.count("\\u001b[2J\\u202eevil") >= 2


def test_absent_values_are_dashes_never_zero():
    refused = [record_for("a", "GRADER_TIMEOUT"), record_for("b", "EVIDENCE_MISSING")]
    summary = summarize(refused)
    comparison = compare(refused, [record_for("a", "pass"), record_for("b", "fail")])
    tally = RetriesTally()
    lines = list(retried_runs(refused, tally))
    page = Page(render_report(summary, lines, tally, comparison))
    found = metrics_of(page)
    for name in ("reward.mean", "reward.minimum", "reward.p50", "reward.maximum"):
        [item] = found[name]
        assert (item["text"], item["value"]) == ("—", None), name
    assert [(item["text"], item["value"]) for item in found["reward.count"]] == [("0", "0")]
    [delta] = found["comparison.reward_delta"]
    assert (delta["text"], delta["value"]) == ("—", None)
    [refused_reward] = found["retries.runs.0.reward"]  # GRADER_TIMEOUT: refused, no reward
    assert refused_reward["text"] == "—"
    assert 'aria-label="Gradable runs per reward' not in render_report(
        summary
    )  # no chart of nothing


def test_every_number_shown_carries_a_data_metric():
    summary, lines, tally, comparison = evil_inputs()
    page = Page(render_report(summary, lines, tally, comparison, regrade=["x"]))
    loose = re.sub(r"\bp(10|50|90)\b", "", " ".join(page.loose_text))  # column names
    assert not re.search(r"\d", loose), loose
    names = set(metrics_of(page))
    assert {"runs", "gradable", "ungradable", "unreadable", "grader_refused"} <= names
    assert {"reward.mean", "attempts.retried", "comparison.regressions"} <= names
    assert "refusals.EVIDENCE_UNREADABLE.grader.runs" in names


def test_numbers_agree_with_the_models_and_long_lists_are_cut():
    records = [record_for(f"r{index}", "retried") for index in range(5)]
    records += [record_for(f"x{index}", "GRADER_TIMEOUT") for index in range(2)]
    records.append(RunRecord.unreadable("gone", "no grade.json"))
    base = [record_for(f"r{index}", "pass") for index in range(5)]
    cand = [record_for(f"r{index}", "fail") for index in range(5)]
    summary = summarize(records)
    listing = RetriesListing(limit=2)
    for record in records:
        listing.add(record)
    comparison = compare(base, cand)
    page = Page(render_report(summary, listing.runs, listing.tally, comparison, limit=2))
    jsons = {
        "summary": summary.model_dump(mode="json"),
        "comparison": comparison.model_dump(mode="json"),
        "retries": {
            "runs": [line.model_dump(mode="json") for line in listing.runs],
            "runs_read": listing.tally.runs,
            "listed": listing.tally.listed,
            **{
                key: getattr(listing.tally, key)
                for key in (
                    *("unreadable", "retried", "healed", "still_refused"),
                    *("retryable", "needs_fix", "unchanged"),
                )
            },
        },
    }
    names = check_against(
        [(item["metric"], item["text"], item["value"]) for item in page.metrics], jsons, 2
    )
    assert {"retries.more", "comparison.regressions.more", "attempts.by_count.2.runs"} <= names
    found = metrics_of(page)
    assert found["retries.more"][0]["text"] == "5" == str(listing.more)  # 7 listed, 2 shown
    assert found["comparison.regressions.more"][0]["text"] == "3"
    assert [run for run in page.runs if run.startswith("r")] == ["r0", "r1", "r0", "r1"]


#: The figures of a reward change's row, after its run.
COLUMNS = ("baseline", "candidate", "delta")


def test_the_markdown_and_the_page_write_each_figure_alike():
    # Rewards whose deltas round to zero from either side, or need rounding.
    base = [0.123456, 0.5, 1e-05, 0.3, 0.25]
    cand = [0.1234, 0.25, 0.0, 0.30002, 0.75]
    comparison = compare(
        [gradable(f"r{index}", reward) for index, reward in enumerate(base)],
        [gradable(f"r{index}", reward) for index, reward in enumerate(cand)],
    )
    found = metrics_of(Page(render_report(summarize([]), comparison=comparison)))
    markdown = render_comparison(comparison)
    for key, heading in (("regressions", "### Regressions"), ("fixes", "### Fixes")):
        rows = table_rows(markdown.split(heading)[1].split("###")[0])
        changes = getattr(comparison, key)
        assert len(rows) == len(changes) >= 2, (key, rows)
        for index, row in enumerate(rows):
            texts = [found[f"comparison.{key}.{index}.{name}"][0]["text"] for name in COLUMNS]
            assert row[1:] == texts, (key, row)
    for key in ("reward_delta", "paired_reward_delta"):
        assert f"{found[f'comparison.{key}'][0]['text']}" in markdown, key
    assert not re.search(r"\de-\d|-0\.0(?!\d)", markdown)  # no 1e-05, no -0.0


def test_a_caller_with_a_summary_and_lines_needs_no_files_nor_tally():
    documents = [document_for(run, outcome) for run, outcome in PLAN.items()]
    summary = summarize(documents)
    lines = list(retried_runs([RunRecord.from_document(d) for d in documents], RetriesTally()))
    page = Page(render_report(summary, lines, title="Nightly"))
    found = metrics_of(page)
    assert "retries.listed" not in found and "retries.more" not in found
    assert found["runs"][0]["text"] == "6" and found["reward.mean"][0]["text"] == "0.75"
    assert page.runs == ["r5", "r6"]  # CASE_NOT_GRADED (the grader's), retried
    with pytest.raises(ValueError, match="limit"):
        render_report(summary, lines, limit=0)


def test_the_report_is_self_contained():
    summary, lines, tally, comparison = evil_inputs()
    text = render_report(summary, lines, tally, comparison)
    assert text.startswith("<!DOCTYPE html>") and "<style>" in text
    assert '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; ' in text
    page = Page(text)
    assert page.tags <= OUR_TAGS and not {"script", "link", "img", "iframe"} & page.tags
    assert not {"src", "href", "srcset", "action", "style"} & page.attributes  # nothing to fetch
    assert page.style and "url(" not in page.style and "@import" not in page.style
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_bar_chart_scales_escapes_and_draws_no_bar_of_nothing():
    assert bar_chart([], title="nothing") == ""
    bars = [
        Bar("<b>&", 2.0, "2", "m.a", "2"),
        Bar("half", 1.0, "1", "m.b", "1"),
        Bar("none", 0.0, "0", "m.c", "0"),
    ]
    svg = bar_chart(bars, title='t"<')
    widths = [float(width) for width in re.findall(r'<rect [^>]*width="([\d.]+)"', svg)]
    assert widths[0] == pytest.approx(2 * widths[1]) and widths[2] == 0
    assert "&lt;b&gt;&amp;" in svg and 'aria-label="t&quot;&lt;"' in svg and "<b>" not in svg
    assert re.findall(r'data-metric="([^"]+)"', svg) == ["m.a", "m.b", "m.c"]
    # A negative value points left of the zero line; zeros alone are not full bars.
    signed = bar_chart(
        [Bar("up", 1.0, "1", "u", "1"), Bar("down", -1.0, "-1", "d", "-1")], title=""
    )
    (x_up, w_up), (x_down, w_down) = [
        (float(x), float(w))
        for x, w in re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', signed)
    ]
    assert x_down + w_down == pytest.approx(x_up) and w_up == pytest.approx(w_down)
    zeros = bar_chart([Bar("a", 0.0, "0", "z", "0")], title="")
    assert re.findall(r'<rect [^>]*width="([\d.]+)"', zeros) == ["0"]
    long = bar_chart([Bar("X" * 80, 1.0, "1", "l", "1")], title="")
    assert "X" * 80 in long and "…" in long  # cut on the chart, whole in the tooltip


def test_the_listing_keeps_at_most_limit_lines():
    listing = RetriesListing(limit=3)
    for index in range(10):
        listing.add(record_for(f"r{index}", "retried"))
        listing.add(record_for(f"p{index}", "pass"))
    assert [line.run for line in listing.runs] == ["r0", "r1", "r2"]
    assert (listing.tally.runs, listing.tally.listed, listing.more) == (20, 10, 7)
    with pytest.raises(ValueError, match="limit"):
        RetriesListing(limit=-1)


# --- The command --------------------------------------------------------------------


def report_page(path: Path) -> Page:
    return Page(path.read_text(encoding="utf-8"))


def test_cli_report_writes_a_page_whole_or_not_at_all(tmp_path, capsys, monkeypatch):
    root = publish_sweep(tmp_path / "nightly", PLAN)
    out = tmp_path / "site" / "report.html"
    out.parent.mkdir()
    out.write_text("old")
    assert main(["sweep", "report", root, "--output", str(out)]) == 0
    page = report_page(out)
    jsons = {
        "summary": cli_json(capsys, "sweep", "summary", root, "--format", "json")["summary"],
        "retries": cli_json(capsys, "sweep", "retries", root, "--format", "json"),
    }
    found = [(item["metric"], item["text"], item["value"]) for item in page.metrics]
    assert {"runs", "reward.mean", "retries.listed"} <= check_against(found, jsons, 50)
    assert os.listdir(out.parent) == ["report.html"]  # no temporary file left
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask

    # A failure on the way leaves the old file as it was, and no temporary file.
    out.write_text("old")

    def broken(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    assert main(["sweep", "report", root, "-o", str(out)]) == 2
    assert "cannot write: No space left on device" in capsys.readouterr().err
    assert out.read_text() == "old" and os.listdir(out.parent) == ["report.html"]


def test_cli_report_to_standard_output(tmp_path, capsys):
    root = publish_sweep(tmp_path / "nightly", PLAN)
    assert main(["sweep", "report", root, "--output", "-"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("<!DOCTYPE html>") and text.endswith("</html>\n")
    assert metrics_of(Page(text))["reward.mean"][0]["text"] == "0.75"
    assert not list(Path(tmp_path).glob("*.html"))


@pytest.mark.parametrize(
    "argv",
    [
        ["sweep", "report", "{missing}", "-o", "{out}"],
        ["sweep", "report", "{root}", "--baseline", "{missing}", "-o", "{out}"],
        ["sweep", "report", "{root}", "-o", "{missing}/report.html"],
        ["sweep", "report", "{root}", "-o", "{out}", "--storage-option", "novalue"],
    ],
)
def test_cli_report_bad_input_exits_2_and_writes_nothing(tmp_path, capsys, argv):
    root = publish_sweep(tmp_path / "nightly", PLAN)
    values = {"{missing}": str(tmp_path / "missing"), "{out}": str(tmp_path / "r.html")}
    values["{root}"] = root
    for key, value in values.items():
        argv = [part.replace(key, value) for part in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("truereward sweep:") and "Traceback" not in err
    assert not (tmp_path / "r.html").exists() and not list(tmp_path.glob(".r.html*"))


def test_cli_report_reads_each_grade_once(tmp_path, monkeypatch):
    base = publish_sweep(tmp_path / "base", {**PLAN, "r1": "fail", "old": "pass"})
    cand = publish_sweep(tmp_path / "cand", {**PLAN, "new": "retried"})
    reads: list[tuple[str, str]] = []
    record = SweepSource.record

    def counted(self: SweepSource, run: str, **kwargs: Any) -> RunRecord:
        reads.append((self.url, run))
        return record(self, run, **kwargs)

    monkeypatch.setattr(SweepSource, "record", counted)
    out = str(tmp_path / "r.html")
    assert main(["sweep", "report", cand, "-o", out]) == 0
    assert sorted(reads) == sorted((cand, run) for run in [*PLAN, "new"])
    reads.clear()
    assert main(["sweep", "report", cand, "--baseline", base, "-o", out]) == 0
    assert sorted(reads) == sorted(
        [(cand, run) for run in [*PLAN, "new"]] + [(base, run) for run in [*PLAN, "old"]]
    )
    found = metrics_of(report_page(Path(out)))
    assert found["comparison.regressions"][0]["text"] == "0"
    assert found["comparison.fixes"][0]["text"] == "1"  # r1: fail -> pass
    assert found["comparison.added"][0]["text"] == "1"
    assert found["retries.listed"][0]["text"] == "3"  # r5 (grader-refused), r6 and new retried


def test_cli_report_of_a_memory_url(memory_root, tmp_path):
    put_memory_sweep(memory_root, PLAN)
    out = tmp_path / "r.html"
    assert main(["sweep", "report", memory_root, "-o", str(out)]) == 0
    assert metrics_of(report_page(out))["runs"][0]["text"] == "6"


# --- In a browser -------------------------------------------------------------------

RUNS = {
    "ok-1": "pass",
    "ok-2": "pass",
    "ok-3": "pass",
    "fails": "fail",
    "regresses": "fail",
    "fixed": "pass",
    "breaks": "never",
    "down": "never",
    "heals-1": ("heal", 1),
    "heals-2": ("heal", 2),
    "blamed": "missing",
    "invalid": "malformed",
    "a\"&'<b>x": ("heal", 1),
}
BASE_RUNS = {
    "ok-1": "pass",
    "ok-2": "pass",
    "ok-3": "fail",
    "fails": "fail",
    "regresses": "pass",
    "fixed": "fail",
    "breaks": "pass",
    "blamed": "pass",
    "dropped": "pass",
}
SCRIPT_WHY = "<script>document.title='pwned'</script> & \"quoted\""


def publish_graded_sweeps(tmp_path: Path) -> tuple[Path, Path, Path]:
    runs = make_sweep(tmp_path / "runs", RUNS)
    plan = runs / "down" / "faults.json"
    plan.write_text(json.dumps({**json.loads(plan.read_text()), "why": SCRIPT_WHY}))
    cand = tmp_path / "graded"
    grade_request(GradeRequest(sweep=str(runs), target=str(cand)), sleep=lambda _: None)
    (cand / "torn").mkdir()
    (cand / "torn" / "grade.json").write_text('{"schema_version": 1, "grad')
    base_runs = make_sweep(tmp_path / "base-runs", BASE_RUNS)
    base = tmp_path / "base"
    grade_request(GradeRequest(sweep=str(base_runs), target=str(base)), sleep=lambda _: None)
    return runs, cand, base


def chromium() -> Any:
    """Debian's chromium, driven through its chromium-driver. A missing one
    fails the test (infra/chromium.sh installs both); it is never skipped."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not os.access(path, os.X_OK)]
    if missing:
        pytest.fail(
            f"{', '.join(missing)} missing: run `bash infra/chromium.sh` (Debian chromium and "
            "chromium-driver, as root)",
            pytrace=False,
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="truereward-chromium-")
    options = Options()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        "--window-size=1200,1600",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.profile_directory = profile
    # The page's viewport, exactly (the window size counts the browser's own frame).
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": 1200, "height": 1600, "deviceScaleFactor": 1, "mobile": False},
    )
    return driver


READ_BACK = """
return Array.from(document.querySelectorAll('[data-metric]')).map(element => [
    element.dataset.metric,
    element.innerText !== undefined ? element.innerText : element.textContent,
    element.getAttribute('data-value'),
]);
"""


def add_bytes(one: bytes, other: bytes) -> bytes:
    """Byte by byte ``(one + other) mod 256`` of two strings of one length, in a
    few big-integer operations (no carry crosses a byte)."""
    size = len(one)
    low, high = int.from_bytes(b"\x7f" * size, "big"), int.from_bytes(b"\x80" * size, "big")
    a, b = int.from_bytes(one, "big"), int.from_bytes(other, "big")
    return (((a & low) + (b & low)) ^ ((a ^ b) & high)).to_bytes(size, "big")


def png_rows(data: bytes) -> tuple[int, int, list[list[bytes]]]:
    """Width, height and the pixels (RGB bytes, row by row) of an 8-bit,
    non-interlaced RGB or RGBA PNG, decoded here (chunks, zlib, the five
    row filters) rather than by the browser that made it."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "a PNG signature"
    position, chunks = 8, []
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        body = data[position + 8 : position + 8 + length]
        crc = struct.unpack(">I", data[position + 8 + length : position + 12 + length])[0]
        assert zlib.crc32(data[position + 4 : position + 8 + length]) == crc, "chunk CRC"
        chunks.append((data[position + 4 : position + 8], body))
        position += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, interlace) == (8, 0) and colour in (2, 6), (depth, colour, interlace)
    size = 3 if colour == 2 else 4
    stride = width * size
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    assert len(raw) == height * (stride + 1), "one filter byte and one row per line"
    previous, rows = bytes(stride), []
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], raw[start + 1 : start + 1 + stride]
        if kind == 1:  # Sub: a running sum per channel, by doubling steps
            shift = size
            while shift < stride:
                line = add_bytes(line, bytes(shift) + line[:-shift])
                shift *= 2
        elif kind == 2:  # Up
            line = add_bytes(line, previous)
        elif kind in (3, 4):  # Average, Paeth: byte by byte
            out = bytearray(line)
            for index in range(stride):
                left = out[index - size] if index >= size else 0
                up = previous[index]
                if kind == 3:
                    out[index] = (out[index] + ((left + up) >> 1)) & 0xFF
                    continue
                corner = previous[index - size] if index >= size else 0
                guess = left + up - corner
                far_left, far_up = abs(guess - left), abs(guess - up)
                far_corner = abs(guess - corner)
                if far_left <= far_up and far_left <= far_corner:
                    nearest = left
                else:
                    nearest = up if far_up <= far_corner else corner
                out[index] = (out[index] + nearest) & 0xFF
            line = bytes(out)
        else:
            assert kind == 0, f"row {row}: filter {kind}"
        rows.append([line[index : index + 3] for index in range(0, stride, size)])
        previous = line
    return width, height, rows


def png_pixels(data: bytes) -> tuple[int, int, set[bytes]]:
    """Width, height and the colours (sampled) of a PNG (:func:`png_rows`)."""
    width, height, rows = png_rows(data)
    colours = {pixel for row in rows[::2] for pixel in row[::2]}
    return width, height, colours


def bar_lengths(png: bytes, colours: set[bytes]) -> list[int]:
    """The horizontal bars of a chart's screenshot, top to bottom: for each
    run of rows holding pixels of one of ``colours``, the most such pixels
    in one row (the bar's length in pixels)."""
    _, _, rows = png_rows(png)
    bars: list[int] = []
    inside = False
    for row in rows:
        count = sum(pixel in colours for pixel in row)
        if count and inside:
            bars[-1] = max(bars[-1], count)
        elif count:
            bars.append(count)
        inside = bool(count)
    return bars


@pytest.mark.slow
def test_the_report_in_chromium_agrees_with_the_json(tmp_path, capsys):
    runs, cand, base = publish_graded_sweeps(tmp_path)
    out = tmp_path / "report.html"
    limit = 3
    argv = ["sweep", "report", str(cand), "--baseline", str(base), "--runs", str(runs)]
    capsys.readouterr()
    assert main([*argv, "-o", str(out), "--limit", str(limit)]) == 0
    assert capsys.readouterr().out == f"wrote the sweep report to {out}\n"
    jsons = {
        "summary": cli_json(capsys, "sweep", "summary", str(cand), "--format", "json")["summary"],
        "comparison": cli_json(
            capsys, "sweep", "compare", str(base), str(cand), "--format", "json"
        )["comparison"],
        "retries": cli_json(capsys, "sweep", "retries", str(cand), "--format", "json"),
    }
    driver = chromium()
    try:
        driver.get(out.resolve().as_uri())
        found = [tuple(item) for item in driver.execute_script(READ_BACK)]
        data_runs = driver.execute_script(
            "return Array.from(document.querySelectorAll('[data-run]')).map(e => e.dataset.run)"
        )
        injected = driver.execute_script(
            "return [document.querySelectorAll('script, img, b').length, document.title,"
            " document.body.innerText]"
        )
        png = driver.get_screenshot_as_png()
    finally:
        driver.quit()
        shutil.rmtree(driver.profile_directory, ignore_errors=True)

    names = check_against(found, jsons, limit)
    summary = jsons["summary"]
    assert summary["unreadable"] == 1 and summary["grader_refused"] == 2
    assert summary["attempts"]["retried"] >= 4 and jsons["retries"]["listed"] > limit
    assert jsons["comparison"]["regressions"] and jsons["comparison"]["fixes"]
    for name in (
        "runs",
        "gradable",
        "ungradable",
        "unreadable",
        "grader_refused",
        "reward.count",
        "reward.mean",
        "reward.minimum",
        "reward.p10",
        "reward.p50",
        "reward.p90",
        "reward.maximum",
        "refusals.EVIDENCE_UNREADABLE.grader.runs",
        "refusals.EVIDENCE_MISSING.run.runs",
        "blame.grader.runs",
        "attempts.total",
        "attempts.retried",
        "attempts.recovered",
        "attempts.by_count.3.runs",
        "retries.listed",
        "retries.still_refused",
        "retries.more",
        "retries.runs.0.attempts",
        "comparison.regressions",
        "comparison.fixes",
        "comparison.newly_ungradable",
        "comparison.newly_gradable",
        "comparison.reward_delta",
        "comparison.regressions.0.delta",
        "comparison.baseline.reward.mean",
    ):
        assert name in names, name

    # Text from the grades is shown as text: no element, no script run.
    count, title, body = injected
    assert count == 0 and title == f"Sweep report: {cand}"
    assert SCRIPT_WHY in body and "a\"&'<b>x" in data_runs and "a\"&'<b>x" in body
    assert "torn" in data_runs  # the unreadable grade, with its reason

    width, height, colours = png_pixels(png)
    assert (width, height) == (1200, 1600)
    assert len(colours) > 20, "a page with text and charts, not one colour"
    assert bytes((255, 255, 255)) in colours  # the background
    assert bytes((0x55, 0xA8, 0x68)) in colours  # the reward chart's bars (#55a868)


BAR_COLOURS = {bytes.fromhex(colour[1:]) for colour in COLOURS.values()}

READ_FIGURES = """
return Array.from(document.querySelectorAll('figure.chart')).map(figure => [
    figure.querySelector('figcaption').innerText,
    Array.from(figure.querySelectorAll('rect[data-bar]')).map(rect => rect.dataset.bar),
]);
"""


@pytest.mark.slow
@pytest.mark.parametrize(
    ("rewards", "buckets"),
    [
        # Rewards of 0 and 1: two bars, one per value.
        ({0.0: 3, 1.0: 7}, [3, 7]),
        # Fractions: ten buckets from 0 to 1 (empty ones draw no bar).
        ({0.05: 2, 0.1: 1, 0.35: 4, 0.95: 1, 1.0: 3}, [2, 1, 0, 4, 0, 0, 0, 0, 0, 4]),
    ],
)
def test_the_charts_bars_in_chromium_match_the_data(tmp_path, rewards, buckets):
    records = [
        RunRecord(run=f"r{value}-{index}", state=RunState.GRADABLE, reward=value)
        for value, count in rewards.items()
        for index in range(count)
    ]
    records += [
        record_for("refused-a", "EVIDENCE_MISSING"),
        record_for("refused-b", "GRADER_TIMEOUT"),
    ]
    outage = (RefusalNote("EVIDENCE_UNREADABLE", "grader", "the store was down"),)
    records += [
        RunRecord(run=f"down-{index}", state=RunState.UNGRADABLE, refusals=outage, attempts=3)
        for index in range(4)
    ]
    summary = summarize(records)
    assert [bucket.runs for bucket in summary.reward_histogram] == buckets
    out = tmp_path / "report.html"
    out.write_text(render_report(summary, title="Charts"), encoding="utf-8")
    driver = chromium()
    try:
        driver.get(out.resolve().as_uri())
        figures = driver.execute_script(READ_FIGURES)
        shots = [
            element.screenshot_as_png
            for element in driver.find_elements("css selector", "figure.chart svg")
        ]
        shown = [
            element.is_displayed()
            for element in driver.find_elements("css selector", "figure.chart figcaption")
        ]
    finally:
        driver.quit()
        shutil.rmtree(driver.profile_directory, ignore_errors=True)

    # Reward histogram, refusals, attempts: each with a caption a reader sees.
    assert len(figures) == len(shots) == 3 and all(shown)
    captions = [caption for caption, _ in figures]
    assert captions[0].startswith("Gradable runs per reward")
    assert captions[1].startswith("Runs refused, by code and blame: the runs column")
    assert captions[2].startswith("Runs by number of attempts")
    summary_json = summary.model_dump(mode="json")
    for (_, metrics), png in zip(figures, shots, strict=True):
        values = [expected_for(metric, {"summary": summary_json}, LIMIT) for metric in metrics]
        drawn = bar_lengths(png, BAR_COLOURS)
        # A bar per value that is not 0, in the table's order, its length in
        # proportion to the value (to a pixel or two of anti-aliasing).
        nonzero = [value for value in values if value]
        assert len(drawn) == len(nonzero), (metrics, values, drawn)
        longest = max(drawn)
        for value, length in zip(nonzero, drawn, strict=True):
            assert abs(length - longest * value / max(nonzero)) <= 2, (metrics, values, drawn)
    assert [expected_for(m, {"summary": summary_json}, LIMIT) for m in figures[0][1]] == buckets


def test_the_docs_report_example_runs(tmp_path):
    from tests.support.doc_blocks import python_blocks

    [code] = [block for block in python_blocks("sweeps.md") if "render_report" in block]
    root = publish_sweep(tmp_path / "nightly", PLAN)
    namespace: dict[str, Any] = {}
    exec(compile(code.replace('"out/nightly"', repr(root)), "docs/sweeps.md", "exec"), namespace)
    found = metrics_of(Page(namespace["page"]))
    assert found["runs"][0]["text"] == "6" and found["retries.listed"][0]["text"] == "2"
