"""``truereward checks score`` and ``compare``: exit codes, output files,
standard input, worker processes, bounded memory, never a traceback."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tracemalloc

import pytest

from tests.support.markdown import table_rows
from truereward.checks import casefile, score_file
from truereward.checks import run as run_module
from truereward.checks.parallel import OrderedMap


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "truereward", "checks", *args],
        capture_output=True,
        text=True,
        input=stdin,
        check=False,
    )


def jsonl(path, cases):
    path.write_text("".join(json.dumps(case) + "\n" for case in cases))
    return str(path)


PASS = {"id": "p", "actual": "a b", "expected": "a b"}
FAIL = {"id": "f", "actual": "a", "expected": "b"}
BAD = {"id": "x", "checks": [{"type": "exact", "min": None}]}


@pytest.mark.slow
def test_exit_codes(tmp_path):
    assert run("score", jsonl(tmp_path / "p.jsonl", [PASS])).returncode == 0
    done = run("score", jsonl(tmp_path / "f.jsonl", [PASS, FAIL]))
    assert done.returncode == 1
    assert "2 cases: 1 passed, 1 failed, 0 not scored; pass rate 50.00%" in done.stderr
    done = run("score", jsonl(tmp_path / "b.jsonl", [PASS, BAD, FAIL]))
    assert done.returncode == 2
    assert json.loads(done.stdout)["summary"]["total"] == 3  # the rest is still scored
    assert f"{tmp_path / 'b.jsonl'}:2: case x: checks[0] (exact): min: a number" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_fail_under(tmp_path):
    path = jsonl(tmp_path / "f.jsonl", [PASS, FAIL])
    assert run("score", path, "--fail-under", "0.5").returncode == 0
    assert run("score", path, "--fail-under", "0.5001").returncode == 1
    assert run("score", path, "--fail-under", "1.5").returncode == 2
    bad = jsonl(tmp_path / "b.jsonl", [PASS, BAD])
    assert run("score", bad, "--fail-under", "0").returncode == 2


@pytest.mark.slow
def test_bad_arguments_and_files(tmp_path):
    done = run("score", str(tmp_path / "absent.jsonl"))
    assert done.returncode == 2 and "absent.jsonl: cannot read" in done.stderr
    assert run("score", str(tmp_path)).returncode == 2  # a directory
    assert run("score", "-", "--jobs", "-1").returncode == 2
    assert run("score", "-", "--regex-timeout", "0").returncode == 2
    done = run("score", jsonl(tmp_path / "p.jsonl", [PASS]), "--output", str(tmp_path / "no" / "r"))
    assert done.returncode == 2 and "cannot write" in done.stderr


@pytest.mark.slow
def test_standard_input_and_formats(tmp_path):
    text = json.dumps([PASS, FAIL])
    done = run("score", "-", "--format", "markdown", stdin=text)
    assert done.returncode == 1 and "| f | fail | 0.0 | token_f1 |" in done.stdout
    assert "- File: `<stdin>`" in done.stdout
    for format in ("junit", "ctrf", "json"):
        assert run("score", "-", "--format", format, stdin=text).returncode == 1


def test_output_file_is_whole(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("old")
    done = run("score", jsonl(tmp_path / "p.jsonl", [PASS]), "--output", str(target))
    assert done.returncode == 0 and done.stdout == ""
    assert json.loads(target.read_text())["summary"]["passed"] == 1
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".")] == []


def test_unicode_in_markdown_output(tmp_path):
    case = {"id": "caf\u00e9 \ud800", "actual": "x", "expected": "y"}
    path = tmp_path / "u.jsonl"
    path.write_text(json.dumps(case) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "truereward", "checks", "score", str(path), "--format", "markdown"],
        capture_output=True,
        check=False,
    )
    assert done.returncode == 1
    # A lone surrogate, which UTF-8 cannot carry, reads as its escape.
    assert table_rows(done.stdout.decode())[0][:2] == ["café \\ud800", "fail"]


@pytest.mark.slow
def test_compare_exit_codes(tmp_path):
    for name, cases in (
        ("base", [PASS, FAIL]),
        ("same", [PASS, FAIL]),
        ("worse", [FAIL | {"id": "p"}, FAIL]),
    ):
        done = run(
            "score",
            jsonl(tmp_path / f"{name}.jsonl", cases),
            "--output",
            str(tmp_path / f"{name}.json"),
        )
        assert done.returncode in (0, 1)
    assert run("compare", str(tmp_path / "base.json"), str(tmp_path / "same.json")).returncode == 0
    done = run("compare", str(tmp_path / "base.json"), str(tmp_path / "worse.json"))
    assert done.returncode == 1 and "- Regressions: **1**" in done.stdout
    done = run(
        "compare", str(tmp_path / "base.json"), str(tmp_path / "worse.json"), "--format", "json"
    )
    assert json.loads(done.stdout)["regressions"][0]["id"] == "p"
    report = json.loads((tmp_path / "base.json").read_text())
    report["cases"].append(report["cases"][0])
    (tmp_path / "dup.json").write_text(json.dumps(report))
    done = run("compare", str(tmp_path / "dup.json"), str(tmp_path / "base.json"))
    assert done.returncode == 2 and "duplicate case id" in done.stderr
    done = run(
        "compare", str(tmp_path / "base.json"), str(tmp_path / "base.json"), "--tolerance", "nan"
    )
    assert done.returncode == 2


def many_cases(count: int) -> bytes:
    lines = []
    for index in range(count):
        case = {
            "id": f"c{index}",
            "actual": f"answer {index % 7} is here",
            "expected": "answer 3 is here",
        }
        if index % 5 == 0:
            case["checks"] = [
                {"type": "regex", "pattern": r"\d"},
                {"type": "contains", "value": ["answer"], "required": False},
            ]
        if index % 97 == 0:
            case = {"id": f"c{index}", "checks": "broken"}
        lines.append(json.dumps(case))
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("format", ["json", "junit", "markdown"])
def test_worker_processes_give_the_same_report(monkeypatch, format):
    monkeypatch.setattr(casefile, "CHUNK", 2048)  # many chunks, so the workers are used
    pools = []

    def counted(*args, **kwargs):
        pools.append(kwargs["jobs"])
        return OrderedMap(*args, **kwargs)

    monkeypatch.setattr(run_module, "OrderedMap", counted)
    data = many_cases(600)
    outputs = []
    for jobs in (1, 2):
        out = io.StringIO()
        report = score_file(io.BytesIO(data), out, file="many.jsonl", format=format, jobs=jobs)
        outputs.append((out.getvalue(), report.summary, report.errors, report.warning_count))
    one, two = outputs
    if format == "junit":  # the run's duration differs
        one = (one[0].split("\n", 3)[3], *one[1:])
        two = (two[0].split("\n", 3)[3], *two[1:])
    assert one == two
    assert two[1].total == 600 and two[1].errors == 7
    assert pools == [2]  # jobs=1 scored in this process; jobs=2 in two workers


class Discard(io.TextIOBase):
    def write(self, text: str) -> int:
        return len(text)


def peak_bytes(count: int) -> int:
    data = many_cases(count)
    tracemalloc.start()
    try:
        score_file(io.BytesIO(data), Discard(), file="m.jsonl", jobs=1)  # type: ignore[arg-type]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_memory_does_not_grow_with_the_number_of_cases(monkeypatch):
    monkeypatch.setattr(casefile, "CHUNK", 16 * 1024)
    small, large = peak_bytes(1_000), peak_bytes(10_000)
    # ten times the cases: about the same peak (one chunk and its report)
    assert large < small * 1.5, (small, large)


@pytest.mark.slow
def test_command_line_with_workers_writes_each_case_once(tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_bytes(many_cases(6000))
    assert path.stat().st_size > 2 * casefile.CHUNK  # several chunks: the workers are used
    outputs = []
    for jobs in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-m", "truereward", "checks", "score", str(path), "--jobs", jobs],
            capture_output=True,
            check=False,
        )
        assert done.returncode == 2, done.stderr  # some cases are broken on purpose
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    report = json.loads(outputs[1])
    assert [case["id"] for case in report["cases"]] == [f"c{index}" for index in range(6000)]
