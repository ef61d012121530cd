"""The judge reader's codes: declared, grader-blamed, retryable, and known to
every process through the entry point without importing calibration."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

from truereward.codes import Blame, Ungradable, lookup
from truereward.judging.codes import DECLARATION, JUDGE_ABSTAINED, PROVIDER_FAILED


def fresh(script: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_codes_are_grader_blamed_and_retryable():
    for name in (JUDGE_ABSTAINED, PROVIDER_FAILED):
        code = lookup(name)
        assert code.blame is Blame.GRADER and code.retry is True
        assert Ungradable(name, "criterion c1").retry
    assert set(DECLARATION) == {"JUDGE_ABSTAINED", "PROVIDER_FAILED"}


def test_the_entry_point_names_the_declaration():
    points = {point.name: point for point in entry_points(group="truereward.codes")}
    assert points["judge"].value == "truereward.judging.codes:DECLARATION"
    assert points["judge"].load() is DECLARATION


def test_a_fresh_process_knows_the_codes_without_importing_calibration():
    out = fresh(
        "import sys\n"
        "from truereward.record.cases import CaseResult\n"
        "row = CaseResult.from_row({'id': 'c1', 'kind': 'fail_to_pass', 'verdict': 'ungradable',"
        " 'code': 'JUDGE_ABSTAINED'})\n"
        "print(row.code, 'truereward.calibrate' in sys.modules, 'httpx' in sys.modules)\n"
    )
    assert out == "JUDGE_ABSTAINED False False"


def test_truereward_codes_lists_them():
    result = subprocess.run(
        [sys.executable, "-m", "truereward", "codes", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    listed = {item["code"]: item for item in json.loads(result.stdout)}
    assert listed["PROVIDER_FAILED"]["blame"] == "grader"
    assert (
        listed["PROVIDER_FAILED"]["retry"] is True and listed["PROVIDER_FAILED"]["shared"] is False
    )


def test_calibration_stays_out_of_import_truereward_and_httpx_out_of_calibration():
    out = fresh(
        "import sys, truereward\n"
        "a = 'truereward.calibrate' in sys.modules\n"
        "import truereward.calibrate\n"
        "b = 'httpx' in sys.modules\n"
        "truereward.calibrate.OpenAIProvider\n"
        "print(a, b, 'httpx' in sys.modules)\n"
    )
    assert out == "False False True"
