# samples/verifier/test_grade.py: a verifier, one test per case of task.json
import json
from pathlib import Path

import pytest

from truereward import CaseResult, Ungradable
from truereward.plugin import cases

CASES = cases("task.json")  # declares the case set (a relative path: beside this file first)
ANSWER = Path(__file__).with_name("answer.json")  # what the run wrote


def read_case(case):
    """The row of one case, or raise Ungradable when the run left nothing readable."""
    try:
        answer = json.loads(ANSWER.read_text())
    except FileNotFoundError:
        raise Ungradable("EVIDENCE_MISSING", f"{ANSWER} is absent") from None
    except ValueError as error:
        raise Ungradable("EVIDENCE_MALFORMED", f"{ANSWER}: {error}") from None
    got, expected = answer.get(case.id), case.options["expected"]
    verdict = "pass" if got == expected else "fail"
    return CaseResult(
        id=case.id, kind=case.kind, verdict=verdict, why=f"{got!r}, expected {expected!r}"
    )


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_case(case, grade):
    grade(case, read_case)  # records the row; fails the test unless the verdict is pass
