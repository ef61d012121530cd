"""The ``junit`` reader: JUnit XML test reports (pytest, Surefire, Go,
Jest, PHPUnit, xUnit.net, ...).

Parsing is done with defusedxml: a document type declaration, entity or
external reference is refused outright (no billion laughs, no external
fetch). The root must be ``<testsuites>`` or ``<testsuite>``; every
``<testcase>`` element at any depth (nested suites) is one test. Declared
totals (``tests=``, ``failures=``...) are never read: the elements are
counted. A BOM is fine.

A test's outcome comes from its result children, by precedence
``<error>`` > ``<failure>`` > ``<skipped>`` (a case can carry several);
Surefire's ``<flakyFailure>``, ``<flakyError>``, ``<rerunFailure>`` and
``<rerunError>`` record earlier executions of a case (reruns): they are not
results, they are the row's reruns (a passing case with one is flaky). A test
listed as several ``<testcase>`` entries (reruns written one entry each, or a
call failure and a teardown error) is one result by the rules of
:mod:`truereward.readers.outcomes`. pytest's ``<skipped type="pytest.xfail">`` is an expected
failure (a pass). A case whose ``status`` attribute is ``disabled``,
``skipped``, ``notrun`` or ``notexecuted`` and that has no result element
is skipped (deliberately unlike junitparser, which counts it as passed: a
disabled test did not run).

Matching a declared case id (outcomes in :mod:`truereward.readers.outcomes`):

1. a pytest node id ``path/to/test_mod.py::Class::test_name[params]`` is
   the ``classname`` pytest writes (the path without ``.py``, ``/`` as
   ``.``, then the classes) and the ``name`` (function with parameters):
   an exact match; else the cases with that name whose classname is that
   one written from another root directory (one ends with the other after
   a ``.``; the rule the ``ctrf`` reader shares, in
   :mod:`truereward.readers.matching`);
2. else the id as a case's ``classname::name``, ``classname.name`` or bare
   ``name`` (Go, Catch2 and friends name tests without a class);
3. else, for an id with ``::``, ``Outer::Inner::name`` as classname
   ``Outer.Inner`` and name ``name``.

Several different cases matching one id is an ambiguous match: that case is
refused (``CASE_INVALID``), never guessed.

Refused evidence: not well-formed XML, a DTD or entity, a root that is not
a JUnit suite (``EVIDENCE_MALFORMED``), a ``<testcase>`` without a name,
and a report with no ``<testcase>`` at all: it shows no test ran, whatever
its declared totals say.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from xml.etree.ElementTree import Element

from ..cases import CaseResult, RerunVerdict
from ..codes import Ungradable
from ..taskspec import TaskSpec
from .evidence import Evidence
from .matching import EntryIndex, pytest_node_id_parts, suffix_related
from .outcomes import Outcome, TestOutcome, rows_for

__all__ = ["READER", "JUnitReader", "JUnitReport", "parse_junit", "pytest_node_id_parts"]

_RESULTS = ("error", "failure", "skipped")
#: Surefire's records of earlier executions, inside a <testcase>.
_RERUNS = frozenset({"flakyFailure", "flakyError", "rerunFailure", "rerunError"})
_NOT_RUN = {"disabled", "skipped", "notrun", "notexecuted", "ignored"}


@dataclass(frozen=True)
class JUnitReport:
    """A parsed JUnit report: one entry per ``<testcase>``."""

    entries: list[TestOutcome]


def _malformed(where: str, why: str) -> Ungradable:
    return Ungradable("EVIDENCE_MALFORMED", f"{where}: {why}")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _result(
    case: Element, namespaced: bool
) -> tuple[Element | None, str, tuple[tuple[RerunVerdict, str], ...]]:
    """The case's result element and its kind, by precedence, and the reruns
    recorded inside it."""
    result: Element | None = None
    reported = "passed"
    reruns: list[tuple[RerunVerdict, str]] = []
    for child in case:
        tag = _local(child.tag) if namespaced else child.tag
        if tag == "error":
            if reported != "error":
                result, reported = child, "error"
        elif tag == "failure" and reported not in ("error", "failure"):
            result, reported = child, "failure"
        elif tag == "skipped" and reported == "passed":
            result, reported = child, "skipped"
        elif tag in _RERUNS:
            reruns.append(("fail", child.get("message") or (child.text or "").strip()[:500]))
    return result, reported, tuple(reruns)


def _entry(case: Element, number: int, where: str, namespaced: bool) -> TestOutcome:
    get = case.get
    name = get("name")
    if not name:
        raise _malformed(where, f"<testcase> number {number} has no name")
    classname = get("classname") or ""
    result, reported, reruns = _result(case, namespaced) if len(case) else (None, "passed", ())
    message = ""
    raw = ""
    if result is None:
        outcome = Outcome.PASSED
        if (get("status") or "").lower() in _NOT_RUN:
            outcome, reported = Outcome.SKIPPED, "skipped"
    else:
        raw = result.get("type") or ""
        message = result.get("message") or (result.text or "").strip()
        if reported == "error":
            outcome = Outcome.ERROR
        elif reported == "failure":
            outcome = Outcome.FAILED
        else:
            outcome = Outcome.XFAIL if raw == "pytest.xfail" else Outcome.SKIPPED
    try:
        duration_s: float | None = float(get("time") or "nan")
    except ValueError:
        duration_s = None
    if duration_s is not None and not 0 <= duration_s < _INFINITY:
        duration_s = None
    if classname:
        label = f"{classname}::{name}"
        keys: tuple[str, ...] = (label, f"{classname}.{name}", name)
    else:
        label, keys = name, (name,)
    return TestOutcome(
        label, outcome, keys, message[:2000], duration_s, False, reported, raw, reruns
    )


_INFINITY = float("inf")


def parse_junit(data: bytes, where: str = "junit report") -> JUnitReport:
    """Parse JUnit XML bytes; :class:`~truereward.codes.Ungradable`
    (``EVIDENCE_MALFORMED``) naming ``where`` when they are not a JUnit
    report with at least one ``<testcase>``."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import ParseError, fromstring

    try:
        root = fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as error:
        raise _malformed(
            where,
            f"refused XML construct ({type(error).__name__}): DTDs and entities are not allowed",
        ) from None
    except ParseError as error:
        raise _malformed(where, f"not well-formed XML: {error}") from None
    except (ValueError, UnicodeError) as error:
        raise _malformed(where, f"not readable XML: {error}") from None
    if _local(root.tag) not in ("testsuites", "testsuite"):
        raise _malformed(
            where,
            f"not a JUnit report: the root element is <{_local(root.tag)}>, "
            "not <testsuites> or <testsuite>",
        )
    namespaced = root.tag.startswith("{")
    cases = (
        (element for element in root.iter() if _local(element.tag) == "testcase")
        if namespaced
        else root.iter("testcase")
    )
    entries = [_entry(case, number, where, namespaced) for number, case in enumerate(cases, 1)]
    if not entries:
        raise _malformed(
            where,
            "the report holds no <testcase>, so nothing shows a test ran "
            "(declared totals are not results)",
        )
    return JUnitReport(entries=entries)


def matcher(index: EntryIndex) -> Any:
    """The JUnit matching rules (module docstring) over ``index``."""

    def match(case_id: str) -> list[TestOutcome]:
        pytest_parts = pytest_node_id_parts(case_id)
        if pytest_parts is not None:
            classname, name = pytest_parts
            found = index.exact(f"{classname}::{name}")
            if found:
                return found
            found = [
                entry
                for entry in index.exact(name)
                if suffix_related(entry.label.rsplit("::", 1)[0], classname, ".")
            ]
            if found:
                return found
        found = index.exact(case_id)
        if found or "::" not in case_id:
            return found
        classname, _, name = case_id.rpartition("::")
        return index.exact(f"{classname.replace('::', '.')}::{name}")

    return match


class JUnitReader:
    """JUnit XML reports."""

    name = "junit"
    default_evidence = "logs/verifier/junit.xml"

    def read(
        self, evidence: Evidence, spec: TaskSpec, options: Mapping[str, Any]
    ) -> list[CaseResult]:
        where = evidence.describe()
        report = parse_junit(evidence.read_bytes(), where)
        return rows_for(
            spec,
            report.entries,
            matcher(EntryIndex(report.entries)),
            source=where,
            passed_reruns=True,  # pytest-rerunfailures writes a rerun as a bare <testcase>
        )


READER = JUnitReader()
