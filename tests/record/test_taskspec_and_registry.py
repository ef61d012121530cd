"""Task specs (JSON, TOML, SWE-bench fields) and the reader registry."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from truereward import TaskSpec, Ungradable, fold, read
from truereward.readers import get_reader, reader_names
from truereward.record.taskspec import TaskSpecError
from truereward.util.exceptions import UnknownName

SWEBENCH = {
    "instance_id": "astropy__astropy-12907",
    "FAIL_TO_PASS": json.dumps(["astropy/modeling/tests/test_separable.py::test_separable[x]"]),
    "PASS_TO_PASS": json.dumps(
        [
            "astropy/modeling/tests/test_separable.py::test_coord_matrix",
            "astropy/modeling/tests/test_separable.py::test_cdot",
        ]
    ),
}


def test_json_and_toml_specs(tmp_path):
    (tmp_path / "task.json").write_text(
        json.dumps(
            {
                "reader": "junit",
                "evidence": "logs/junit.xml",
                "cases": [
                    {"id": "a", "kind": "fail_to_pass", "options": {"timeout": 5}},
                    {"id": "b", "kind": "pass_to_pass"},
                ],
            }
        )
    )
    (tmp_path / "task.toml").write_text(
        textwrap.dedent("""
        reader = "junit"
        [[cases]]
        id = "a"
        kind = "fail_to_pass"
        [[cases]]
        id = "b"
        kind = "pass_to_pass"
    """)
    )
    from_json = TaskSpec.load(tmp_path / "task.json")
    from_toml = TaskSpec.load(tmp_path / "task.toml")
    assert (
        from_json.case_kinds()
        == from_toml.case_kinds()
        == {"a": "fail_to_pass", "b": "pass_to_pass"}
    )
    assert from_json.reader == "junit" and from_json.evidence == "logs/junit.xml"
    assert from_json.case("a").options == {"timeout": 5}


@pytest.mark.parametrize(
    "fields",
    [
        SWEBENCH,
        {
            "FAIL_TO_PASS": json.loads(SWEBENCH["FAIL_TO_PASS"]),
            "PASS_TO_PASS": json.loads(SWEBENCH["PASS_TO_PASS"]),
        },
    ],
)
def test_swebench_fields_load_as_they_are(fields):
    spec = TaskSpec.of(fields)
    assert spec.case_kinds() == {
        "astropy/modeling/tests/test_separable.py::test_separable[x]": "fail_to_pass",
        "astropy/modeling/tests/test_separable.py::test_coord_matrix": "pass_to_pass",
        "astropy/modeling/tests/test_separable.py::test_cdot": "pass_to_pass",
    }


def test_a_swebench_instance_file(tmp_path):
    (tmp_path / "instance.json").write_text(json.dumps(SWEBENCH))
    assert len(TaskSpec.load(tmp_path / "instance.json").cases) == 3


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"cases": [{"id": "a", "kind": "guard"}]}, "cases.0.kind"),
        (
            {"cases": [{"id": "a", "kind": "fail_to_pass"}, {"id": "a", "kind": "pass_to_pass"}]},
            "cases[1].id: 'a' is declared twice",
        ),
        ({"cases": [{"id": " a", "kind": "fail_to_pass"}]}, "cases.0.id"),
        ({"cases": [{"id": "a", "kind": "fail_to_pass", "size": 1}]}, "cases.0.size"),
        ({"FAIL_TO_PASS": "[not json"}, "FAIL_TO_PASS: not a JSON list"),
        ({"FAIL_TO_PASS": "[1, 2]"}, "FAIL_TO_PASS: a list of test ids"),
    ],
)
def test_invalid_specs_name_the_field(value, message):
    with pytest.raises(TaskSpecError, match=message.replace("[", r"\[").replace("]", r"\]")):
        TaskSpec.of(value)


def test_a_spec_file_error_names_the_file(tmp_path):
    (tmp_path / "task.json").write_text('{"cases": [{"id": "a", "kind": "x"}]}')
    with pytest.raises(TaskSpecError, match=r"task\.json: cases\.0\.kind"):
        TaskSpec.load(tmp_path / "task.json")


def test_the_same_small_spec_bytes_give_the_same_spec_and_errors_still_name_the_file():
    data = b'{"cases": {"t::a": "fail_to_pass", "t::b": "pass_to_pass"}}'
    first = TaskSpec.parse(data, name="one/task.json")
    assert TaskSpec.parse(bytes(data), name="two/task.json") is first  # validated once
    assert first.case_kinds() == {"t::a": "fail_to_pass", "t::b": "pass_to_pass"}
    assert TaskSpec.parse(data, toml=False) == TaskSpec.parse(data + b" ")  # other bytes, same spec
    bad = b'{"cases": [{"id": "a", "kind": "x"}]}'
    for name in ("one/task.json", "two/task.json"):  # never a message cached with its name
        with pytest.raises(TaskSpecError, match=rf"^{name}: cases\.0\.kind"):
            TaskSpec.parse(bad, name=name)
    large = json.dumps({"cases": {f"t::{index:06}": "pass_to_pass" for index in range(3000)}})
    assert len(large) > 64 << 10  # over the bound: validated each time
    assert TaskSpec.parse(large.encode()) is not TaskSpec.parse(large.encode())


def test_a_spec_folds_like_its_case_set(row):
    spec = TaskSpec.of(SWEBENCH)
    result = fold([row(case.id, case.kind) for case in spec.cases[:2]], case_set=spec)
    assert [item.code for item in result.refusals] == ["CASES_MISSING"]


def test_an_invalid_case_set_given_to_read_is_case_invalid(tmp_path):
    (tmp_path / "r.json").write_text("{}")
    with pytest.raises(Ungradable) as caught:
        read("ctrf", str(tmp_path / "r.json"), {"a": "guard"})
    assert caught.value.code == "CASE_INVALID"


def test_builtin_readers_are_registered():
    assert {"ctrf", "junit", "state", "figure", "rows"} <= set(reader_names())
    assert get_reader("junit").name == "junit"
    with pytest.raises(UnknownName, match="known readers: checks, ctrf"):
        get_reader("tap")


class CrashingReader:
    name = "crashing"
    default_evidence = "x"

    def read(self, evidence, spec, options):
        raise KeyError("stdout")


class LyingReader:
    name = "lying"
    default_evidence = "x"

    def read(self, evidence, spec, options):
        return {"a": "pass"}


@pytest.mark.parametrize("reader", [CrashingReader(), LyingReader()])
def test_a_broken_reader_is_case_not_graded_never_a_crash(tmp_path, reader):
    with pytest.raises(Ungradable) as caught:
        read(reader, str(tmp_path), {"a": "fail_to_pass"})
    assert caught.value.code == "CASE_NOT_GRADED"
    assert reader.name in caught.value.why


def test_readers_and_their_codes_are_found_through_entry_points(tmp_path):
    (tmp_path / "tap_reader.py").write_text(
        textwrap.dedent("""
        from truereward import CaseResult
        from truereward.codes import Ungradable

        CODES = {"TAP_PLAN_MISMATCH": {"meaning": "the TAP plan and the tests disagree",
                                       "blame": "run"}}

        class TapReader:
            name = "tap"
            default_evidence = "results.tap"

            def read(self, evidence, spec, options):
                text = evidence.read_text()
                if not text.startswith("1.."):
                    raise Ungradable("TAP_PLAN_MISMATCH", "no plan line")
                return [CaseResult(id=case.id, kind=case.kind, verdict="pass")
                        for case in spec.cases]

        READER = TapReader()
    """)
    )
    info = tmp_path / "tap_reader-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tap-reader\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[truereward.readers]\ntap = tap_reader:READER\n"
        "[truereward.codes]\ntap = tap_reader:CODES\n"
    )
    (tmp_path / "ok.tap").write_text("1..1\nok 1\n")
    (tmp_path / "bad.tap").write_text("ok 1\n")
    script = textwrap.dedent(f"""
        from truereward import read, Ungradable
        from truereward.readers import reader_names
        print("tap" in reader_names())
        print(read("tap", {str(tmp_path / "ok.tap")!r}, {{"a": "fail_to_pass"}})[0].verdict)
        try:
            read("tap", {str(tmp_path / "bad.tap")!r}, {{"a": "fail_to_pass"}})
        except Ungradable as error:
            print(error.code, error.blame.value)
    """)
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(tmp_path), "PATH": ""},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "pass", "TAP_PLAN_MISMATCH", "run"]


def test_a_reader_named_by_import_path(tmp_path):
    assert get_reader("truereward.readers.junit:READER").name == "junit"
    assert get_reader("truereward.readers.junit:") is get_reader("truereward.readers.junit:READER")
    assert "truereward.readers.junit:READER" not in reader_names()


def test_a_reader_path_that_cannot_be_loaded_is_an_unknown_reader():
    with pytest.raises(UnknownName, match=r"reader 'nosuch\.mod:X' \(nosuch\.mod:X\) cannot be"):
        get_reader("nosuch.mod:X")
    with pytest.raises(UnknownName, match="is not a reader"):
        get_reader("os:path")
