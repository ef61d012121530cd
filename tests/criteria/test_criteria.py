"""The workspace criteria one by one: pass, fail, and each refusal (whose
fault), through the ``workspace`` reader as a verifier runs it."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest

import truereward as tr
from tests.support.criteria_rows import grade, passed, refused, score
from truereward.codes import Ungradable


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    (root / "sub").mkdir(parents=True)
    (root / "notes.txt").write_text("alpha beta\ngamma\n")
    (root / "answer.txt").write_text("  42 \n")
    (root / "data.json").write_text('{"a": {"b": [1, 2, {"c.d": "x"}]}, "flag": true}')
    (root / "table.csv").write_text('name,note\nalice,"two\r\nlines"\nbob,x\n')
    (root / "sub" / "inner.txt").write_text("inner")
    return root


# --- files ------------------------------------------------------------------------------------


def test_file_exists_and_not_exists(app: Path) -> None:
    assert passed(grade(app, "file_exists", path="notes.txt"))
    assert passed(grade(app, "file_exists", path="sub"))
    assert not passed(grade(app, "file_exists", path="absent.txt"))
    assert passed(grade(app, "file_not_exists", path="absent.txt"))
    row = grade(app, "file_not_exists", path="notes.txt")
    assert not passed(row) and "must not" in row.why


def test_a_symlink_that_stays_inside_is_followed(app: Path) -> None:
    os.symlink("sub/inner.txt", app / "link.txt")
    os.symlink("sub", app / "dirlink")
    assert passed(grade(app, "file_contains", path="link.txt", text="inner"))
    assert passed(grade(app, "file_contains", path="dirlink/inner.txt", text="inner"))


def test_file_contains_and_matches(app: Path) -> None:
    assert passed(grade(app, "file_contains", path="notes.txt", text="beta\ngam"))
    row = grade(app, "file_contains", path="notes.txt", text="delta")
    assert not passed(row) and "'delta'" in row.why
    assert not passed(grade(app, "file_contains", path="absent.txt", text="x"))
    assert passed(grade(app, "file_matches", path="answer.txt", expected="42"))
    assert not passed(grade(app, "file_matches", path="answer.txt", expected="4"))


def test_text_is_read_as_text_mode_reads_it(app: Path) -> None:
    (app / "crlf.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\rthree")
    assert passed(grade(app, "file_matches", path="crlf.txt", expected="one\ntwo\nthree"))
    (app / "latin.txt").write_bytes(b"caf\xe9")
    row = grade(app, "file_contains", path="latin.txt", text="caf")
    assert not passed(row) and "not UTF-8" in row.why


def test_files_equal(app: Path) -> None:
    (app / "copy.txt").write_text("42")
    assert passed(grade(app, "files_equal", path1="answer.txt", path2="copy.txt"))
    assert not passed(grade(app, "files_equal", path1="answer.txt", path2="notes.txt"))
    row = grade(app, "files_equal", path1="answer.txt", path2="gone.txt")
    assert not passed(row) and "gone.txt does not exist" in row.why


def test_file_contains_regex(app: Path) -> None:
    assert passed(grade(app, "file_contains_regex", path="notes.txt", pattern=r"(?m)^gam+a$"))
    # No flags, as re.search(pattern, text): ^ is the start of the text.
    assert not passed(grade(app, "file_contains_regex", path="notes.txt", pattern=r"^gam+a$"))
    assert not passed(grade(app, "file_contains_regex", path="notes.txt", pattern=r"(?m)^beta"))
    refused(
        grade(app, "file_contains_regex", path="notes.txt", pattern="(unclosed"), "CASE_INVALID"
    )


def test_a_regex_that_backtracks_gives_up_never_fails(app: Path) -> None:
    (app / "long.txt").write_text("a" * 5000 + "!")
    row = grade(
        app,
        "file_contains_regex",
        path="long.txt",
        pattern="(a|aa)+$",
        reader={"regex_timeout": 0.2},
    )
    refused(row, "CHECK_GAVE_UP")


def test_diff_ratio_is_graded_by_degree(app: Path) -> None:
    from difflib import SequenceMatcher

    row = grade(app, "diff_ratio", path="notes.txt", expected="alpha beta\ngama", min=0.9)
    expected = SequenceMatcher(None, "alpha beta\ngamma", "alpha beta\ngama").ratio()
    assert passed(row) and score(row) == expected
    row = grade(app, "diff_ratio", path="notes.txt", expected="something else")
    assert row.verdict == "fail" and 0 < score(row) < 1
    assert score(grade(app, "diff_ratio", path="absent.txt", expected="x")) == 0.0


def test_diff_ratio_of_long_texts_is_the_same_in_the_child(app: Path) -> None:
    from difflib import SequenceMatcher

    text = "".join(chr(0x4E00 + (i * 7919) % 150) for i in range(3000))
    other = "".join("X" if i % 7 == 0 else c for i, c in enumerate(text))
    (app / "long.txt").write_text(text)
    row = grade(app, "diff_ratio", path="long.txt", expected=other, min=0.0)
    assert score(row) == SequenceMatcher(None, text, other).ratio()


def test_diff_ratio_out_of_time_is_the_graders(app: Path) -> None:
    text = "".join(chr(0x4E00 + (i * 7919) % 150) for i in range(20000))
    other = "".join("X" if i % 2 == 0 else c for i, c in enumerate(text))
    (app / "long.txt").write_text(text)
    refused(
        grade(app, "diff_ratio", path="long.txt", expected=other, timeout=0.5), "GRADER_TIMEOUT"
    )


ABSENT = {  # every kind that reads a file, with its options over the absent gone.bin
    "file_contains": {"path": "gone.bin", "text": "x"},
    "file_contains_regex": {"path": "gone.bin", "pattern": "x"},
    "file_matches": {"path": "gone.bin", "expected": "x"},
    "diff_ratio": {"path": "gone.bin", "expected": "x"},
    "files_equal": {"path1": "notes.txt", "path2": "gone.bin"},
    "json_key_equals": {"path": "gone.bin", "key": "a", "expected": 1},
    "json_path_equals": {"path": "gone.bin", "json_path": "a", "expected": 1},
    "csv_cell_equals": {"path": "gone.bin", "row": 0, "col": 0, "expected": "x"},
    "xlsx_cell_equals": {"path": "gone.bin", "cell": "A1", "expected": 1},
    "sqlite_query_equals": {"db_path": "gone.bin", "query": "SELECT 1", "expected": 1},
    "image_size_equals": {"path": "gone.bin", "width": 1, "height": 1},
    "image_similarity": {"path1": "gone.bin", "path2": "notes.txt"},
}


@pytest.mark.parametrize("criterion", sorted(ABSENT))
def test_an_absent_file_fails_its_criterion_saying_so(app: Path, criterion: str) -> None:
    row = grade(app, criterion, **ABSENT[criterion])
    assert not passed(row) and row.why.endswith("/gone.bin does not exist"), row.why


# --- structured files --------------------------------------------------------------------------


def test_json_key_and_path(app: Path) -> None:
    assert passed(grade(app, "json_key_equals", path="data.json", key="flag", expected=True))
    assert not passed(grade(app, "json_key_equals", path="data.json", key="flag", expected=1))
    assert not passed(grade(app, "json_key_equals", path="data.json", key="nope", expected=1))
    row = grade(app, "json_path_equals", path="data.json", json_path="a.b.1", expected=2.0)
    assert passed(row)
    row = grade(app, "json_path_equals", path="data.json", pointer="/a/b/2/c.d", expected="x")
    assert passed(row)
    assert not passed(
        grade(app, "json_path_equals", path="data.json", json_path="a.b.7", expected=1)
    )
    assert not passed(
        grade(app, "json_path_equals", path="data.json", json_path="a.b.x", expected=1)
    )
    refused(
        grade(app, "json_path_equals", path="data.json", json_path="a", pointer="/a", expected=1),
        "CASE_INVALID",
    )
    (app / "list.json").write_text("[1, 2]")
    row = grade(app, "json_key_equals", path="list.json", key="a", expected=1)
    assert not passed(row) and "not" in row.why
    (app / "nan.json").write_text('{"a": NaN}')
    for criterion, where in (
        ("json_key_equals", {"key": "a"}),
        ("json_path_equals", {"pointer": "/a"}),
    ):
        row = grade(app, criterion, path="nan.json", expected=1, **where)
        assert not passed(row) and row.why.endswith(
            "nan.json is not JSON: NaN is not a JSON number"
        )


def test_csv_cells(app: Path) -> None:
    assert passed(
        grade(app, "csv_cell_equals", path="table.csv", row=0, col="note", expected="two\r\nlines")
    )
    assert passed(grade(app, "csv_cell_equals", path="table.csv", row=2, col=-2, expected="bob"))
    assert not passed(grade(app, "csv_cell_equals", path="table.csv", row=2, col=5, expected="x"))
    assert not passed(
        grade(app, "csv_cell_equals", path="table.csv", row=0, col="none", expected="x")
    )
    refused(
        grade(app, "csv_cell_equals", path="table.csv", row=-1, col=0, expected="x"), "CASE_INVALID"
    )
    refused(
        grade(app, "csv_cell_equals", path="table.csv", row=0, col=0, expected=1), "CASE_INVALID"
    )
    (app / "bad.csv").write_text('a,"' + "b" * 200_000 + '"\n')  # over csv's field limit
    row = grade(app, "csv_cell_equals", path="bad.csv", row=5, col=0, expected="x")
    assert not passed(row) and "not CSV" in row.why


def test_xlsx_cells(app: Path) -> None:
    import datetime

    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet["A1"], sheet["B1"], sheet["C1"] = "x", 3, datetime.date(2026, 1, 31)
    workbook.create_sheet("Two")["A1"] = True
    workbook.save(app / "book.xlsx")
    assert passed(grade(app, "xlsx_cell_equals", path="book.xlsx", cell="b1", expected=3.0))
    assert passed(
        grade(app, "xlsx_cell_equals", path="book.xlsx", cell="A1", sheet="Two", expected=True)
    )
    assert not passed(
        grade(app, "xlsx_cell_equals", path="book.xlsx", cell="A1", sheet="Two", expected=1)
    )
    assert passed(
        grade(app, "xlsx_cell_equals", path="book.xlsx", cell="C1", expected="2026-01-31T00:00:00")
    )
    row = grade(app, "xlsx_cell_equals", path="book.xlsx", cell="A1", sheet="Three", expected="x")
    assert not passed(row) and "no sheet" in row.why
    refused(
        grade(app, "xlsx_cell_equals", path="book.xlsx", cell="A1:B2", expected=1), "CASE_INVALID"
    )
    row = grade(app, "xlsx_cell_equals", path="notes.txt", cell="A1", expected=1)
    assert not passed(row) and "not an xlsx workbook" in row.why


def _database(path: Path, wal: bool = False) -> sqlite3.Connection:
    connection = sqlite3.connect(path)
    if wal:
        connection.execute("PRAGMA journal_mode=WAL")
    connection.executescript(
        "CREATE TABLE t (id INTEGER, name TEXT, blob BLOB);"
        "INSERT INTO t VALUES (1, 'one', x'00'), (2, NULL, NULL);"
    )
    connection.commit()
    return connection


def test_sqlite_queries(app: Path) -> None:
    _database(app / "db.sqlite").close()
    query = "SELECT COUNT(*) FROM t"
    assert passed(grade(app, "sqlite_query_equals", db_path="db.sqlite", query=query, expected=2))
    assert not passed(
        grade(app, "sqlite_query_equals", db_path="db.sqlite", query=query, expected=3)
    )
    null = "SELECT name FROM t WHERE id = 2"
    assert passed(grade(app, "sqlite_query_equals", db_path="db.sqlite", query=null, expected=None))
    truth = "SELECT id = 1 FROM t WHERE id = 1"
    assert passed(
        grade(app, "sqlite_query_equals", db_path="db.sqlite", query=truth, expected=True)
    )
    blob = "SELECT blob FROM t WHERE id = 1"
    assert not passed(
        grade(app, "sqlite_query_equals", db_path="db.sqlite", query=blob, expected="\x00")
    )
    row = grade(
        app, "sqlite_query_equals", db_path="db.sqlite", query="SELECT x FROM u", expected=1
    )
    assert not passed(row) and "no such table" in row.why
    refused(
        grade(app, "sqlite_query_equals", db_path="db.sqlite", query="SELEC 1", expected=1),
        "CASE_INVALID",
    )
    refused(
        grade(app, "sqlite_query_equals", db_path="db.sqlite", query="SELECT f(1)", expected=1),
        "CASE_INVALID",
    )
    refused(
        grade(app, "sqlite_query_equals", db_path="db.sqlite", query=query, expected=[1]),
        "CASE_INVALID",
    )


def test_sqlite_reads_the_last_writes_of_a_database_in_wal_mode(app: Path) -> None:
    connection = _database(app / "db.sqlite", wal=True)  # kept open: the log is not checkpointed
    try:
        connection.execute("INSERT INTO t VALUES (3, 'three', NULL)")
        connection.commit()
        assert (app / "db.sqlite-wal").stat().st_size > 0
        row = grade(
            app,
            "sqlite_query_equals",
            db_path="db.sqlite",
            query="SELECT MAX(id) FROM t",
            expected=3,
        )
        assert passed(row)
    finally:
        connection.close()


def _png(path: Path, size: tuple[int, int], colour: tuple[int, int, int] = (1, 2, 3)) -> None:
    from PIL import Image

    Image.new("RGB", size, colour).save(path)


def test_images(app: Path) -> None:
    _png(app / "a.png", (4, 4))
    _png(app / "b.png", (4, 4))
    _png(app / "wide.png", (8, 4))
    from PIL import Image

    with Image.open(app / "b.png") as image:
        changed = image.copy()
    changed.putpixel((0, 0), (9, 9, 9))
    changed.save(app / "c.png")
    assert passed(grade(app, "image_size_equals", path="a.png", width=4, height=4))
    assert not passed(grade(app, "image_size_equals", path="a.png", width=4, height=5))
    assert passed(grade(app, "image_similarity", path1="a.png", path2="b.png"))
    row = grade(app, "image_similarity", path1="a.png", path2="c.png", min=0.9)
    assert passed(row) and score(row) == 15 / 16
    row = grade(app, "image_similarity", path1="a.png", path2="wide.png", min=0.0)
    assert row.verdict == "pass" and score(row) == 0.0 and "differ in size" in row.why
    row = grade(app, "image_size_equals", path="notes.txt", width=1, height=1)
    assert not passed(row) and "not an image" in row.why
    # The same bytes give the same words: no buffer address in a grade.
    assert row.why == grade(app, "image_size_equals", path="notes.txt", width=1, height=1).why
    assert " at 0x" not in row.why
    assert score(grade(app, "image_similarity", path1="a.png", path2="gone.png")) == 0.0


def test_an_eps_image_is_not_opened(app: Path) -> None:
    (app / "x.eps").write_text("%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 10 10\nshowpage\n")
    row = grade(app, "image_size_equals", path="x.eps", width=10, height=10)
    assert not passed(row) and "format" in row.why


# --- commands ---------------------------------------------------------------------------------


def test_commands(app: Path) -> None:
    assert passed(grade(app, "command_succeeds", cmd=["test", "-f", "notes.txt"]))
    row = grade(app, "command_succeeds", cmd="ls absent.txt")
    assert not passed(row) and "status" in row.why and "absent.txt" in row.why
    assert passed(grade(app, "command_succeeds", cmd="pwd", cwd="sub"))
    assert passed(grade(app, "command_output_contains", cmd="cat notes.txt", text="beta"))
    assert passed(grade(app, "command_output_matches", cmd="cat answer.txt", expected="42"))
    assert passed(
        grade(app, "command_output_matches_regex", cmd=["printf", "v1.2.3"], pattern=r"^v\d+\.\d")
    )
    assert passed(
        grade(
            app,
            "command_output_contains",
            cmd="echo $MARK | tr a-z A-Z",
            shell=True,
            env={"MARK": "here"},
            text="HERE",
        )
    )
    row = grade(app, "command_output_contains", cmd=["pwd"], cwd="sub", text="/sub")
    assert passed(row)


def test_a_string_with_shell_syntax_needs_shell(app: Path) -> None:
    for command in (
        "cat notes.txt | wc -l",
        "echo $HOME",
        "ls *.txt",
        "A=1 env",
        "a > b",
        "x && y",
    ):
        row = grade(app, "command_succeeds", cmd=command)
        refused(row, "CASE_INVALID")
        assert "shell" in row.why
    refused(grade(app, "command_succeeds", cmd=["ls"], shell=True), "CASE_INVALID")
    refused(grade(app, "command_succeeds", cmd="  "), "CASE_INVALID")


def test_a_command_out_of_time_is_the_graders_unless_the_task_says(app: Path) -> None:
    refused(grade(app, "command_succeeds", cmd=["sleep", "10"], timeout=0.3), "GRADER_TIMEOUT")
    row = grade(app, "command_succeeds", cmd=["sleep", "10"], timeout=0.3, timeout_fails=True)
    assert not passed(row) and "did not finish" in row.why


def test_who_fails_when_the_program_is_missing(app: Path) -> None:
    refused(grade(app, "command_succeeds", cmd=["no-such-tool-here"]), "TOOL_MISSING")
    row = grade(app, "command_succeeds", cmd=["no-such-tool-here"], missing_program_fails=True)
    assert not passed(row)
    row = grade(app, "command_succeeds", cmd=["./build.sh"])  # the run should have written it
    assert not passed(row) and "cannot be run" in row.why
    (app / "build.sh").write_text("echo built\n")  # not executable
    assert not passed(grade(app, "command_succeeds", cmd=["./build.sh"]))
    row = grade(app, "command_succeeds", cmd="no-such-tool-here", shell=True)
    assert not passed(row) and "127" in row.why  # the shell's: measured like any exit


def test_cwd_must_be_a_workspace_directory(app: Path) -> None:
    assert not passed(grade(app, "command_succeeds", cmd=["true"], cwd="absent"))
    refused(grade(app, "command_succeeds", cmd=["true"], cwd="/tmp"), "CASE_INVALID")
    refused(grade(app, "command_succeeds", cmd=["true"], cwd="../"), "CASE_INVALID")


# --- the case's declaration --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({}, "options.criterion"),
        ({"criterion": "no_such"}, "unknown criterion"),
        ({"criterion": "file_exists"}, "path"),
        ({"criterion": "file_exists", "path": "a", "extra": 1}, "extra"),
        ({"criterion": "file_exists", "path": 3}, "path"),
        ({"criterion": "file_exists", "path": ""}, "path"),
        ({"criterion": "file_exists", "path": "a/../b"}, ".."),
        ({"criterion": "command_succeeds", "cmd": "true", "timeout": "30"}, "timeout"),
        ({"criterion": "command_succeeds", "cmd": "true", "timeout": 0}, "timeout"),
        ({"criterion": "diff_ratio", "path": "a", "expected": "b", "min": 1.5}, "min"),
        ({"criterion": "trajectory_turn_count"}, "max_turns"),
        ({"criterion": "trajectory_turn_count", "equals": 2, "max_turns": 3}, "equals"),
        ({"criterion": "trajectory_turn_count", "min_turns": 4, "max_turns": 3}, "min_turns"),
        ({"criterion": "http_status_equals", "url": "http://localhost/", "status": 99}, "status"),
    ],
)
def test_options_that_make_no_criterion_are_case_invalid(
    app: Path, options: dict[str, Any], said: str
) -> None:
    spec = {"cases": [{"id": "c", "kind": "fail_to_pass", "options": options}]}
    (row,) = tr.read("workspace", str(app), spec)
    refused(row, "CASE_INVALID")
    assert said in row.why


def test_reader_options_are_validated(app: Path) -> None:
    spec = {
        "cases": [
            {
                "id": "c",
                "kind": "fail_to_pass",
                "options": {"criterion": "file_exists", "path": "a"},
            }
        ]
    }
    with pytest.raises(Ungradable) as raised:
        tr.read("workspace", str(app), spec, regex_timeout=-1)
    assert raised.value.code == "CASE_INVALID" and "regex_timeout" in raised.value.why
    assert (
        grade(app, "file_exists", path="notes.txt", reader={"weights": {"c": 2}}).verdict == "pass"
    )


def test_a_missing_workspace_is_refused_whole(tmp_path: Path) -> None:
    with pytest.raises(Ungradable) as raised:
        grade(tmp_path / "absent", "file_exists", path="a")
    assert raised.value.code == "WORKSPACE_MISSING"
    (tmp_path / "file").write_text("x")
    with pytest.raises(Ungradable) as raised:
        grade(tmp_path / "file", "file_exists", path="a")
    assert raised.value.code == "WORKSPACE_MISSING"


def test_every_row_says_how_long_it_took_and_the_reads_are_in_the_grade(app: Path) -> None:
    spec = [
        {
            "id": "a",
            "kind": "fail_to_pass",
            "options": {"criterion": "file_contains", "path": "notes.txt", "text": "a"},
        },
        {
            "id": "b",
            "kind": "fail_to_pass",
            "options": {"criterion": "file_matches", "path": "notes.txt", "expected": "a"},
        },
        {
            "id": "c",
            "kind": "pass_to_pass",
            "options": {"criterion": "file_exists", "path": "table.csv"},
        },
    ]
    document = tr.grade_evidence("workspace", str(app), spec)
    assert document.reward == 0.0
    assert all(row.duration_s >= 0 for row in document.detail)
    paths = [item.path for item in document.evidence]
    assert paths == [str(app / "notes.txt")]  # read twice, recorded once; existence reads nothing


def test_the_scheme_can_average_the_scores(app: Path) -> None:
    spec = [
        {
            "id": "a",
            "kind": "fail_to_pass",
            "options": {"criterion": "file_exists", "path": "notes.txt"},
        },
        {
            "id": "b",
            "kind": "fail_to_pass",
            "options": {
                "criterion": "diff_ratio",
                "path": "answer.txt",
                "expected": "41",
                "min": 0.4,
            },
        },
    ]
    document = tr.grade_evidence("workspace", str(app), spec, scheme="mean-score/1")
    assert document.reward == pytest.approx((1.0 + 0.5) / 2)


def test_a_criterion_that_scores_out_of_range_is_refused_never_clipped(app: Path) -> None:
    from truereward.criteria.kind import CriterionKind, Options, Outcome
    from truereward.criteria.registry import register

    class Nothing(Options):
        pass

    for name, value in (
        ("test_too_high", 1.5),
        ("test_negative", -3.0),
        ("test_nan", float("nan")),
    ):
        register(CriterionKind(name, "test", Nothing, lambda _o, _c, v=value: Outcome(v, True)))
        row = grade(app, name)
        refused(row, "CASE_NOT_GRADED")
        assert "never clipped" in row.why

    def crash(_options: Any, _context: Any) -> Outcome:
        raise KeyError("bug")

    register(CriterionKind("test_crash", "test", Nothing, crash))
    row = grade(app, "test_crash")
    refused(row, "CASE_NOT_GRADED")
    assert "KeyError" in row.why


def test_the_registry_lists_every_built_in_and_loads_lazily() -> None:
    import subprocess

    from truereward.criteria.registry import criterion_names

    assert len([n for n in criterion_names() if not n.startswith("test_")]) == 23
    script = (
        "import sys, truereward as tr\n"
        "tr.read('workspace', sys.argv[1], [{'id': 'a', 'kind': 'fail_to_pass', "
        "'options': {'criterion': 'file_exists', 'path': 'x'}}])\n"
        "print(sorted(m for m in ('PIL', 'openpyxl', 'regex', 'sqlite3') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(Path(__file__).parent)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.strip() == "[]"


def test_a_missing_extra_is_case_invalid_naming_it(app: Path) -> None:
    import subprocess

    _png(app / "a.png", (2, 2))
    script = (
        "import sys, json, truereward as tr\n"
        "sys.modules['PIL'] = None; sys.modules['openpyxl'] = None\n"
        "spec = [{'id': 'i', 'kind': 'fail_to_pass', 'options': {'criterion': 'image_size_equals',"
        " 'path': 'a.png', 'width': 2, 'height': 2}},"
        " {'id': 'x', 'kind': 'fail_to_pass', 'options': {'criterion': 'xlsx_cell_equals',"
        " 'path': 'a.xlsx', 'cell': 'A1', 'expected': 1}}]\n"
        "print(json.dumps([[r.code, r.why] for r in tr.read('workspace', sys.argv[1], spec)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(app)], capture_output=True, text=True, check=True
    )
    (image, sheet) = json.loads(done.stdout)
    assert image[0] == "CASE_INVALID" and "truereward[images]" in image[1]
    assert sheet[0] == "CASE_INVALID" and "truereward[xlsx]" in sheet[1]


def test_a_stored_workspace_on_an_object_store(tmp_path: Path) -> None:
    import fsspec

    fs = fsspec.filesystem("memory")
    fs.pipe("/store/run-1/workspace/notes.txt", b"alpha beta\n")
    fs.pipe("/store/run-1/workspace/data.json", b'{"n": 3}')
    _database(tmp_path / "db.sqlite").close()
    fs.pipe("/store/run-1/workspace/db.sqlite", (tmp_path / "db.sqlite").read_bytes())
    stored = tr.readers.Evidence(url="memory://store/run-1/workspace", root="memory://store/run-1")
    spec = [
        {
            "id": "a",
            "kind": "fail_to_pass",
            "options": {"criterion": "file_contains", "path": "notes.txt", "text": "beta"},
        },
        {
            "id": "b",
            "kind": "fail_to_pass",
            "options": {
                "criterion": "json_key_equals",
                "path": "data.json",
                "key": "n",
                "expected": 3,
            },
        },
        {
            "id": "c",
            "kind": "fail_to_pass",
            "options": {
                "criterion": "sqlite_query_equals",
                "db_path": "db.sqlite",
                "query": "SELECT COUNT(*) FROM t",
                "expected": 2,
            },
        },
        {
            "id": "d",
            "kind": "fail_to_pass",
            "options": {"criterion": "file_exists", "path": "absent.txt"},
        },
        {
            "id": "e",
            "kind": "fail_to_pass",
            "options": {"criterion": "command_succeeds", "cmd": ["true"]},
        },
    ]
    rows = tr.read("workspace", stored, spec)
    assert [row.verdict for row in rows] == ["pass", "pass", "pass", "fail", "ungradable"]
    assert rows[4].code == "CASE_INVALID"
    assert [item.path for item in stored.digests] == [
        "workspace/notes.txt",
        "workspace/data.json",
        "workspace/db.sqlite",
    ]
    with pytest.raises(Ungradable) as raised:
        tr.read("workspace", "memory://store/run-2/workspace", spec)
    assert raised.value.code == "WORKSPACE_MISSING"
