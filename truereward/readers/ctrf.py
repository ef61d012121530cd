"""The ``ctrf`` reader: CTRF JSON test reports, current and legacy
(pytest-json-ctrf 0.3.x, playwright).

Streams ``results.tests`` one test at a time, keeps the entries a declared
case can match, and maps them to rows with :mod:`.outcomes`. The rules
(shapes accepted, outcomes, xfail in legacy reports, tags, matching, merged
parametrised cases, what is refused) are docs/readers.md, "ctrf".
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..codes import Ungradable
from ..grade.bounded import MAX_ITEMS
from ..record.cases import RerunVerdict
from ..util.strictjson import StrictJSONError
from . import streamjson
from .evidence import Readable
from .matching import (
    KEEP_ALL,
    EntryBudget,
    EntryIndex,
    Matcher,
    key_filter,
    names_a_file,
)
from .outcomes import MAX_NAME, ReportedOutcome, TestOutcome, strip_parameters
from .reportreader import ParsedReport, ReportReader

__all__ = ["READER", "CtrfReport", "parse_ctrf", "read_ctrf", "wanted_keys"]

STATUSES = ("passed", "failed", "skipped", "pending", "other")
_XFAIL_RAW = {"xfailed", "xfail"}
_ERROR_RAW = {"setup_failed", "teardown_failed", "error", "errored"}

_QUOTED = r"""(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""
#: How pytest prints a skip's report: the tuple (path, line, reason).
_SKIP_TUPLE = re.compile(rf"\({_QUOTED}, \d+, {_QUOTED}\)", re.DOTALL)


@dataclass(frozen=True)
class CtrfReport(ParsedReport):
    """A parsed CTRF report (:class:`ParsedReport`), with whether it is a
    legacy shape and the tool that wrote it."""

    legacy: bool = False
    tool: str = ""


def _malformed(where: str, why: str) -> Ungradable:
    return Ungradable("EVIDENCE_MALFORMED", f"{where}: {why}")


def _outcome(status: str, raw: str, tags: list[str]) -> ReportedOutcome:
    if status == "passed":
        return ReportedOutcome.PASSED
    if status == "failed":
        return ReportedOutcome.ERROR if raw in _ERROR_RAW else ReportedOutcome.FAILED
    if status == "skipped":
        return (
            ReportedOutcome.XFAIL
            if raw in _XFAIL_RAW or "xfail" in tags
            else ReportedOutcome.SKIPPED
        )
    if status == "pending":
        return ReportedOutcome.SKIPPED
    return ReportedOutcome.FAILED  # "other": no known result is not a pass


def _may_be_merged(name: str, tags: list[str]) -> bool:
    """Whether a legacy entry may stand for several parametrised cases: it
    carries a ``parametrize::`` tag, or its name has no ``[params]`` part
    (pytest-json-ctrf 0.3.x writes merged cases under the bare node id, not
    always with the tag)."""
    return strip_parameters(name) == name or any(tag.startswith("parametrize::") for tag in tags)


def _is_traceback(trace: object) -> bool:
    """Whether a legacy pytest entry's ``trace`` is a failure's report (an
    xfail's), not the ``(path, line, reason)`` tuple of a skip."""
    if not isinstance(trace, str) or not trace.strip():
        return False
    return _SKIP_TUPLE.fullmatch(trace.strip()) is None


def _shape(value: object) -> str:
    """``value`` in words, for a message."""
    kind = (
        "a boolean"
        if isinstance(value, bool)
        else "a number"
        if isinstance(value, int | float)
        else "a string"
        if isinstance(value, str)
        else "an object"
        if isinstance(value, dict)
        else "an array"
    )
    text = json.dumps(value, ensure_ascii=False)
    return f"{text[:60]}{'...' if len(text) > 60 else ''} ({kind})"


def _keys(test: dict[str, Any], name: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The keys an entry is matched under, and again with its name and file
    trimmed of surrounding whitespace (empty when that changes nothing)."""
    file_path = test.get("filePath", test.get("file_path"))
    if not isinstance(file_path, str):
        file_path = ""
    keys = (name, f"{file_path}::{name}") if file_path and "::" not in name else (name,)
    if name.strip() == name and file_path.strip() == file_path:
        return keys, ()
    name, file_path = name.strip(), file_path.strip()
    trimmed = (name, f"{file_path}::{name}") if file_path and "::" not in name else (name,)
    return keys, trimmed


#: What a legacy report changes in an entry (:func:`_as_legacy`): its
#: duration when a float (seconds), its tags (merged cases), and whether it
#: is a skip whose trace is a failure's traceback.
_Legacy = tuple[float | None, list[str], bool]


def _entry(
    test: dict[str, Any], index: int, keys: tuple[str, ...], trimmed: tuple[str, ...]
) -> tuple[TestOutcome, _Legacy]:
    """The entry of ``test`` as a current report has it, and what a legacy
    one would change (whether the report is legacy may only be known at its
    end; nothing else of the test is kept)."""
    name: str = test["name"]
    status: str = test["status"]
    raw = test.get("rawStatus", test.get("raw_status"))
    raw = raw if isinstance(raw, str) else ""
    given = test.get("tags")
    invalid = ""
    tags: list[str] = []
    if isinstance(given, list):
        tags = given  # the tags that mean something (_tags), strings
    elif given is not None:
        invalid = f"results.tests[{index}]: tags is {_shape(given)}, not a list of strings"
    duration = test.get("duration")
    duration_s = seconds = None
    if isinstance(duration, int | float) and not isinstance(duration, bool) and duration >= 0:
        # Legacy reporters wrote float seconds; current CTRF is integer ms.
        duration_s = duration / 1000
        if isinstance(duration, float):
            seconds = duration
    message = test.get("message")
    outcome = _outcome(status, raw, tags)
    reruns = _reruns(test) if "retryAttempts" in test or "retries" in test else ()
    entry = TestOutcome(  # label, outcome, keys, message, duration_s, merged, reported, raw...
        name,
        outcome,
        keys,
        message if isinstance(message, str) else "",
        duration_s,
        False,
        status,
        raw or status,
        reruns,
        trimmed,
        invalid,
    )
    traceback = (
        outcome is ReportedOutcome.SKIPPED
        and status == "skipped"
        and _is_traceback(test.get("trace"))
    )
    return entry, (seconds, tags, traceback)


def _as_legacy(entry: TestOutcome, legacy: _Legacy, pytest: bool) -> TestOutcome:
    """``entry`` as a legacy report means it (``pytest``: written by
    pytest-json-ctrf)."""
    seconds, tags, traceback = legacy
    if seconds is not None:
        entry.duration_s = seconds
    entry.merged = _may_be_merged(entry.label, tags)
    if pytest and traceback:
        entry.outcome = ReportedOutcome.XFAIL
        entry.raw = "skipped with a failure's traceback: an xfail (pytest-json-ctrf 0.3.x)"
    return entry


def _reruns(test: dict[str, Any]) -> tuple[tuple[RerunVerdict, str], ...]:
    """The earlier executions a CTRF test records: its ``retryAttempts``
    without the final execution (CTRF's own example lists it last,
    pytest-json-ctrf does not), else ``retries`` failures."""
    attempts = test.get("retryAttempts")
    retries = test.get("retries")
    count = retries if isinstance(retries, int) and not isinstance(retries, bool) else None
    if isinstance(attempts, _Attempts) and attempts.total:
        return attempts.earlier(final=count is not None and attempts.total == count + 1)
    if count:
        return tuple(("fail", "") for _ in range(min(count, 100)))
    return ()


#: The fields of a test an entry reads that are scalars (a container given
#: there is checked and skipped, and stands as an empty one of its kind).
_SCALARS = frozenset(
    {
        "name",
        "status",
        "rawStatus",
        "raw_status",
        "duration",
        "message",
        "trace",
        "filePath",
        "file_path",
        "retries",
    }
)


def _scalar(stream: streamjson.Events, event: str, first: Any, depth: int) -> Any:
    """The scalar that starts with ``(event, first)``; a container is
    checked without being built and stands as an empty one of its kind."""
    if event == "start_map" or event == "start_array":
        streamjson.skip(stream, event, first, depth)
        return {} if event == "start_map" else []
    return first


def _tags(stream: streamjson.Events, event: str, first: Any) -> Any:
    """A test's ``tags``: as a list, the tags that mean something to an
    entry (``xfail``, and one ``parametrize::`` tag; items that are not
    strings are ignored); anything else as a scalar or an empty container
    (:func:`_scalar`), which makes the entry malformed."""
    if event != "start_array":
        return _scalar(stream, event, first, 5)
    found: list[str] = []
    for event, item in stream:
        if event == "end_array":
            return found
        if event == "start_map" or event == "start_array":
            streamjson.skip(stream, event, item, 6)
        elif isinstance(item, str) and _meaningful(item, found):
            found.append(item)
    raise StrictJSONError("invalid JSON: the document ends inside a value")


def _meaningful(tag: str, found: list[str]) -> bool:
    """Whether ``tag`` says something the tags ``found`` so far do not."""
    if tag == "xfail":
        return tag not in found
    return tag.startswith("parametrize::") and not any(
        item.startswith("parametrize::") for item in found
    )


class _Attempts:
    """A test's ``retryAttempts``, read as a stream: the first few attempts
    and the last, each as (verdict, message cut at 500 characters), and how
    many there were (items that are not objects are not attempts)."""

    __slots__ = ("failed_between", "first", "last", "total")

    #: Attempts kept from the start: with one standing for the rest and the
    #: last one, no more than a grade keeps (truereward.grade.bounded).
    KEEP = MAX_ITEMS - 2

    def __init__(self) -> None:
        self.first: list[tuple[RerunVerdict, str]] = []
        self.last: tuple[RerunVerdict, str] | None = None
        self.total = 0
        self.failed_between = 0  # failures among the attempts left out

    def add(self, attempt: tuple[RerunVerdict, str]) -> None:
        self.total += 1
        if len(self.first) < self.KEEP:
            self.first.append(attempt)
            return
        if self.last is not None and self.last[0] == "fail":
            self.failed_between += 1
        self.last = attempt

    def earlier(self, *, final: bool) -> tuple[tuple[RerunVerdict, str], ...]:
        """The reruns: every attempt, without the last when it is the final
        execution (``final``), those left out said in one."""
        items = [*self.first, *([self.last] if self.last is not None else [])]
        if final:
            items.pop()
        between = self.total - len(self.first) - (self.last is not None)
        if between:
            summary: tuple[RerunVerdict, str] = (
                "fail" if self.failed_between else "pass",
                f"{between} more attempts left out, {self.failed_between} of them failed",
            )
            items.insert(len(self.first), summary)
        return tuple(items)


def _attempts(stream: streamjson.Events, event: str, first: Any) -> Any:
    """A test's ``retryAttempts``: an :class:`_Attempts` for a list, else
    the scalar or an empty container (:func:`_scalar`), which is ignored."""
    if event != "start_array":
        return _scalar(stream, event, first, 5)
    found = _Attempts()
    for event, item in stream:
        if event == "end_array":
            return found
        if event == "start_map":
            found.add(_attempt(stream))
        elif event == "start_array":
            streamjson.skip(stream, event, item, 6)
    raise StrictJSONError("invalid JSON: the document ends inside a value")


def _attempt(stream: streamjson.Events) -> tuple[RerunVerdict, str]:
    """One attempt object, whose start was just read: its verdict (passed
    or not) and message."""
    fields: dict[str, Any] = {}
    seen: set[str] = set()
    key = ""
    for event, item in stream:
        if event == "map_key":
            if item in seen:
                raise StrictJSONError(f"duplicate key {item!r} in one object")
            seen.add(item)
            key = item
        elif event == "end_map":
            message = fields.get("message")
            return (
                "pass" if fields.get("status") == "passed" else "fail",
                message[:500] if isinstance(message, str) else "",
            )
        elif key in ("status", "message"):
            fields[key] = _scalar(stream, event, item, 7)
        elif event == "start_map" or event == "start_array":
            streamjson.skip(stream, event, item, 7)
    raise StrictJSONError("invalid JSON: the document ends inside a value")


class _Scan:
    """One pass over a CTRF document's events: the few top-level fields,
    and each of ``results.tests`` checked, counted, and kept when it is
    named and among the first :data:`~truereward.readers.matching.KEEP_ALL`
    or one of ``case_ids`` can match it (every named one without them). The
    first thing wrong with the report is remembered and the document read
    to its end: JSON that is not strict is refused first, as ``loads``
    would."""

    def __init__(self, case_ids: Sequence[str] | None, where: str = "ctrf report") -> None:
        self.case_ids = case_ids
        self.where = where
        self.wanted: Callable[[Sequence[str]], bool] | None = None
        self.is_object = False
        self.report_format: Any = None
        self.has_tests = False
        self.tool: Any = None
        self.tests = 0
        self.nameless = 0
        #: The first malformed entry: (index, why).
        self.bad_entry: tuple[int, str] | None = None
        #: Kept tests: their entries, and what a legacy report changes in them.
        self.kept: list[tuple[TestOutcome, _Legacy]] = []
        self.budget = EntryBudget()

    def document(self, stream: streamjson.Events) -> None:
        event, first = next(stream)
        if event != "start_map":
            streamjson.skip(stream, event, first, 1)
        else:
            self.is_object = True
            self._object(stream, {"reportFormat": self._report_format, "results": self._results}, 1)
        for _ in stream:  # nothing may follow (ijson says so on reaching it)
            raise StrictJSONError("invalid JSON: more than one value")

    def _object(
        self,
        stream: streamjson.Events,
        fields: dict[str, Callable[[streamjson.Events, str, Any], None]],
        depth: int,
    ) -> None:
        """The object whose start was just read, at ``depth``: each of
        ``fields`` handed to its function, the rest skipped."""
        seen: set[str] = set()
        for event, key in stream:
            if event == "end_map":
                return
            if key in seen:
                raise StrictJSONError(f"duplicate key {key!r} in one object")
            seen.add(key)
            event, first = next(stream)
            read = fields.get(key)
            if read is None:
                streamjson.skip(stream, event, first, depth + 1)
            else:
                read(stream, event, first)

    def _report_format(self, stream: streamjson.Events, event: str, first: Any) -> None:
        self.report_format = _scalar(stream, event, first, 2)

    def _results(self, stream: streamjson.Events, event: str, first: Any) -> None:
        if event != "start_map":
            streamjson.skip(stream, event, first, 2)
            return
        self._object(stream, {"tests": self._tests, "tool": self._tool}, 2)

    def _tool(self, stream: streamjson.Events, event: str, first: Any) -> None:
        if event != "start_map":
            self.tool = _scalar(stream, event, first, 3)
            return
        self.tool = {}
        self._object(stream, {"name": self._tool_name}, 3)

    def _tool_name(self, stream: streamjson.Events, event: str, first: Any) -> None:
        self.tool["name"] = _scalar(stream, event, first, 4)

    def _tests(self, stream: streamjson.Events, event: str, first: Any) -> None:
        if event != "start_array":
            streamjson.skip(stream, event, first, 3)
            return
        self.has_tests = True
        test_ = self._test
        # Each test built here, written out for the usual flat object (this
        # runs for every event of every test). Only the fields an entry is
        # made of are kept, each bounded; the rest is checked and skipped.
        for event, first in stream:
            if event == "end_array":
                return
            if event != "start_map":
                test_(_scalar(stream, event, first, 4))
                continue
            test: dict[str, Any] = {}
            seen: set[str] = set()
            key = ""
            for event, item in stream:
                if event == "map_key":
                    if item in seen:
                        raise StrictJSONError(f"duplicate key {item!r} in one object")
                    seen.add(item)
                    key = item
                elif event == "end_map":
                    break
                elif key in _SCALARS:
                    test[key] = _scalar(stream, event, item, 5)
                elif key == "tags":
                    test[key] = _tags(stream, event, item)
                elif key == "retryAttempts":
                    test[key] = _attempts(stream, event, item)
                elif event == "start_map" or event == "start_array":
                    streamjson.skip(stream, event, item, 5)
            test_(test)

    def _test(self, test: Any) -> None:
        index = self.tests
        self.tests += 1
        if self.bad_entry is not None:
            return  # the report is refused; the rest is only checked as JSON
        if not isinstance(test, dict):
            self.bad_entry = (index, "a test is a JSON object")
            return
        status = test.get("status")
        if status not in STATUSES:
            self.bad_entry = (index, f"status {status!r} is not one of {', '.join(STATUSES)}")
            return
        name = test.get("name")
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            self.nameless += 1
            return
        file_path = test.get("filePath", test.get("file_path"))
        if isinstance(file_path, str) and len(file_path) > MAX_NAME:
            self.nameless += 1
            return
        keys, trimmed = _keys(test, name)
        wanted = self.wanted
        if wanted is None and self.case_ids is not None and self.tests > KEEP_ALL:
            wanted = self.wanted = wanted_keys(self.case_ids)
        if wanted is None or wanted(keys) or (trimmed and wanted(trimmed)):
            if not self.budget.take(keys, trimmed):
                # Refused now: reading on would keep nothing.
                raise _malformed(self.where, self.budget.why())
            self.kept.append(_entry(test, index, keys, trimmed))


def read_ctrf(
    stream: Readable,
    where: str = "ctrf report",
    case_ids: Sequence[str] | None = None,
) -> CtrfReport:
    """Parse CTRF as it is read from ``stream``, keeping the tests that one
    of ``case_ids`` can match (every named test without them; the first
    :data:`~truereward.readers.matching.KEEP_ALL` in any case);
    :class:`~truereward.codes.Ungradable` (``EVIDENCE_MALFORMED``) naming
    ``where`` and the entry when it is not a CTRF report with at least one
    named test. Memory holds one chunk, one test and the kept tests."""
    scan = _Scan(case_ids, where)
    try:
        scan.document(streamjson.events(stream))
    except Ungradable:
        raise
    except Exception as error:
        strict = streamjson.translate(error)
        if strict is None:
            raise
        raise _malformed(where, f"not JSON: {strict}") from None
    if not scan.is_object:
        raise _malformed(where, "not a CTRF report (the top level is not an object)")
    report_format = scan.report_format
    if report_format is not None and report_format != "CTRF":
        raise _malformed(where, f"reportFormat is {report_format!r}, not 'CTRF'")
    if not scan.has_tests:
        raise _malformed(where, "not a CTRF report (no results.tests list)")
    if not scan.tests:
        raise _malformed(where, "the report holds no test, so nothing shows the suite ran")
    if scan.bad_entry is not None:
        index, why = scan.bad_entry
        raise _malformed(f"{where}: results.tests[{index}]", why)
    if scan.nameless == scan.tests:
        raise _malformed(
            where,
            f"not one of its {scan.tests} tests has a name (a test needs a non-empty name), "
            "so none can be a declared case and nothing shows which tests ran",
        )
    legacy = report_format is None
    tool = scan.tool.get("name") if isinstance(scan.tool, dict) else None
    tool = tool if isinstance(tool, str) else ""
    pytest_legacy = legacy and tool == "pytest"
    entries = [
        _as_legacy(entry, changes, pytest_legacy) if legacy else entry
        for entry, changes in scan.kept
    ]
    return CtrfReport(
        entries=entries, legacy=legacy, tool=tool, tests=scan.tests, nameless=scan.nameless
    )


def parse_ctrf(data: bytes, where: str = "ctrf report") -> CtrfReport:
    """Parse CTRF bytes, every named test kept (:func:`read_ctrf`)."""
    return read_ctrf(io.BytesIO(data), where)


def wanted_keys(case_ids: Sequence[str]) -> Callable[[Sequence[str]], bool]:
    """Whether a test with the given keys can match one of ``case_ids``
    under the rules of :func:`matcher`."""
    return key_filter(case_ids, lambda case_id: (case_id,), "/", names_a_file)


def matcher(index: EntryIndex) -> Matcher:
    """The CTRF matching rules (module docstring) over ``index``."""

    def match(case_id: str) -> list[TestOutcome]:
        found = index.exact(case_id)
        if found or not names_a_file(case_id):
            return found
        return index.suffix(case_id, "/")

    return match


READER = ReportReader("ctrf", "logs/verifier/ctrf.json", read_ctrf, matcher)
