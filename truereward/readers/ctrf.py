"""The ``ctrf`` reader: CTRF JSON test reports, current and legacy.

Accepted shapes: current CTRF (``reportFormat: "CTRF"``, integer
milliseconds) and the older shapes tools still write: no ``reportFormat``,
``suite`` as a string (playwright), float seconds and snake_case keys
(``raw_status``, ``file_path``) with parametrised cases merged into one
entry (pytest-json-ctrf 0.3.x, which Harbor's task template pins).

Each entry of ``results.tests`` is one test, named by ``name``; its outcome
comes from ``status`` (``passed``, ``failed``, ``skipped``, ``pending``,
``other``) refined by the raw status and tags pytest-json-ctrf writes: a
skipped entry whose raw status is ``xfailed`` or that carries the ``xfail``
tag is an expected failure (a pass); ``pending`` is a skip; ``other`` (no
known result) counts as a failure. ``status`` is the final outcome; earlier
executions (``retryAttempts``, or a bare ``retries`` count: a retry follows a
failure) are the row's reruns, and a passing test with one is flaky.

Matching a declared case id (see :mod:`truereward.readers.outcomes` for
what an outcome means for a case):

1. an entry whose ``name`` is the id;
2. else an entry whose ``filePath::name`` is the id (tools that name tests
   without their file);
3. else, for an id that names a file (a ``/`` in it, or a pytest node id
   such as ``test_app.py::test_x``), the entries whose name (or
   ``filePath::name``) is the id written from another root directory: one
   ends with the other after a ``/``, so ``test_app.py::test_x`` is
   ``tests/test_app.py::test_x`` (the rule the ``junit`` reader applies to
   node ids, :mod:`truereward.readers.matching`).

Several different tests matching one id is an ambiguous match (say
``test_a.py::test_x`` with both ``tests/test_a.py::test_x`` and
``tests/sub/test_a.py::test_x`` in the report): that case is refused
(``CASE_INVALID``), never guessed.

A legacy report (no ``reportFormat``) may merge the parametrised cases of
a function into one entry named by the node id without its ``[params]``
part, with or without a ``parametrize::`` tag (pytest-json-ctrf 0.3.x). So
in a legacy report a declared ``test_x[2]`` that no entry matches, but whose
``test_x`` is an entry (by the rules above), cannot be told apart and is
refused (``CASE_INVALID``), never guessed. In a current report it is absent.

Refused evidence: not JSON, not a CTRF report (no ``results.tests`` list,
or ``reportFormat`` other than ``CTRF``), an entry without a name or with a
status outside the CTRF vocabulary (``EVIDENCE_MALFORMED``, naming the
entry), and a report with no test at all (it shows nothing ran).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..cases import CaseResult, RerunVerdict
from ..codes import Ungradable
from ..strictjson import StrictJSONError, loads
from ..taskspec import TaskSpec
from .evidence import Evidence
from .matching import EntryIndex, names_a_file
from .outcomes import Outcome, TestOutcome, rows_for, strip_parameters

__all__ = ["READER", "CtrfReader", "CtrfReport", "parse_ctrf"]

STATUSES = ("passed", "failed", "skipped", "pending", "other")
_XFAIL_RAW = {"xfailed", "xfail"}
_ERROR_RAW = {"setup_failed", "teardown_failed", "error", "errored"}


@dataclass(frozen=True)
class CtrfReport:
    """A parsed CTRF report: its entries, whether it is a legacy shape, and
    the statuses as the report wrote them (for counting)."""

    entries: list[TestOutcome]
    legacy: bool
    tool: str


def _malformed(where: str, why: str) -> Ungradable:
    return Ungradable("EVIDENCE_MALFORMED", f"{where}: {why}")


def _outcome(status: str, raw: str, tags: list[str]) -> Outcome:
    if status == "passed":
        return Outcome.PASSED
    if status == "failed":
        return Outcome.ERROR if raw in _ERROR_RAW else Outcome.FAILED
    if status == "skipped":
        return Outcome.XFAIL if raw in _XFAIL_RAW or "xfail" in tags else Outcome.SKIPPED
    if status == "pending":
        return Outcome.SKIPPED
    return Outcome.FAILED  # "other": no known result is not a pass


def _may_be_merged(name: str, tags: list[str]) -> bool:
    """Whether a legacy entry may stand for several parametrised cases: it
    carries a ``parametrize::`` tag, or its name has no ``[params]`` part
    (pytest-json-ctrf 0.3.x writes merged cases under the bare node id, not
    always with the tag)."""
    return strip_parameters(name) == name or any(tag.startswith("parametrize::") for tag in tags)


def _entry(test: Any, index: int, where: str, legacy: bool) -> TestOutcome:
    at = f"{where}: results.tests[{index}]"
    if not isinstance(test, dict):
        raise _malformed(at, "a test is a JSON object")
    name = test.get("name")
    if not isinstance(name, str) or not name.strip():
        raise _malformed(at, "a test needs a non-empty name")
    status = test.get("status")
    if status not in STATUSES:
        raise _malformed(at, f"status {status!r} is not one of {', '.join(STATUSES)}")
    raw = test.get("rawStatus", test.get("raw_status"))
    raw = raw if isinstance(raw, str) else ""
    tags = [tag for tag in test.get("tags") or [] if isinstance(tag, str)]
    keys = [name]
    file_path = test.get("filePath", test.get("file_path"))
    if isinstance(file_path, str) and file_path and "::" not in name:
        keys.append(f"{file_path}::{name}")
    duration = test.get("duration")
    duration_s = None
    if isinstance(duration, int | float) and not isinstance(duration, bool) and duration >= 0:
        # Legacy reporters wrote float seconds; current CTRF is integer ms.
        duration_s = float(duration) if legacy and isinstance(duration, float) else duration / 1000
    message = test.get("message")
    return TestOutcome(
        label=name,
        outcome=_outcome(status, raw, tags),
        keys=tuple(keys),
        message=message if isinstance(message, str) else "",
        duration_s=duration_s,
        merged=legacy and _may_be_merged(name, tags),
        raw=raw or status,
        reported=status,
        reruns=_reruns(test),
    )


def _reruns(test: dict[str, Any]) -> tuple[tuple[RerunVerdict, str], ...]:
    """The earlier executions a CTRF test records: its ``retryAttempts``
    without the final execution (CTRF's own example lists it last,
    pytest-json-ctrf does not), else ``retries`` failures."""
    attempts = test.get("retryAttempts")
    retries = test.get("retries")
    count = retries if isinstance(retries, int) and not isinstance(retries, bool) else None
    if isinstance(attempts, list) and attempts:
        earlier = [item for item in attempts if isinstance(item, dict)]
        if count is not None and len(earlier) == count + 1:
            earlier = earlier[:-1]  # the final execution, the test itself
        return tuple(
            (
                "pass" if item.get("status") == "passed" else "fail",
                item["message"][:500] if isinstance(item.get("message"), str) else "",
            )
            for item in earlier
        )
    if count:
        return tuple(("fail", "") for _ in range(min(count, 100)))
    return ()


def parse_ctrf(data: bytes, where: str = "ctrf report") -> CtrfReport:
    """Parse CTRF bytes; :class:`~truereward.codes.Ungradable`
    (``EVIDENCE_MALFORMED``) naming ``where`` and the entry when they are not
    a CTRF report with at least one test."""
    try:
        document = loads(data)
    except StrictJSONError as error:
        raise _malformed(where, f"not JSON: {error}") from None
    if not isinstance(document, dict):
        raise _malformed(where, "not a CTRF report (the top level is not an object)")
    report_format = document.get("reportFormat")
    if report_format is not None and report_format != "CTRF":
        raise _malformed(where, f"reportFormat is {report_format!r}, not 'CTRF'")
    results = document.get("results")
    tests = results.get("tests") if isinstance(results, dict) else None
    if not isinstance(tests, list):
        raise _malformed(where, "not a CTRF report (no results.tests list)")
    if not tests:
        raise _malformed(where, "the report holds no test, so nothing shows the suite ran")
    legacy = report_format is None
    entries = [_entry(test, index, where, legacy) for index, test in enumerate(tests)]
    tool = results.get("tool") if isinstance(results, dict) else None
    name = tool.get("name") if isinstance(tool, dict) else None
    return CtrfReport(entries=entries, legacy=legacy, tool=name if isinstance(name, str) else "")


def matcher(index: EntryIndex) -> Any:
    """The CTRF matching rules (module docstring) over ``index``."""

    def match(case_id: str) -> list[TestOutcome]:
        found = index.exact(case_id)
        if found or not names_a_file(case_id):
            return found
        return index.suffix(case_id, "/")

    return match


class CtrfReader:
    """CTRF JSON reports."""

    name = "ctrf"
    default_evidence = "logs/verifier/ctrf.json"

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult]:
        where = evidence.describe()
        report = parse_ctrf(evidence.read_bytes(), where)
        index = EntryIndex(report.entries)
        return rows_for(spec, report.entries, matcher(index), source=where)


READER = CtrfReader()
