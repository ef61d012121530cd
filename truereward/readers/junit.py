"""The ``junit`` reader: JUnit XML test reports (pytest, Surefire, Go,
Jest, PHPUnit, xUnit.net, ...).

Parses with defusedxml's expat handlers, no tree built, keeps the
``<testcase>`` entries a declared case can match, and maps them to rows
with :mod:`.outcomes`. The rules (parsing and its bounds, outcomes, reruns,
matching, what is refused) are docs/readers.md, "junit".
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..codes import Ungradable
from ..grade.bounded import MAX_ITEMS
from ..record.cases import RerunVerdict
from ..util.safefile import CHUNK
from .evidence import Readable
from .matching import (
    KEEP_ALL,
    EntryBudget,
    EntryIndex,
    Matcher,
    key_filter,
    pytest_node_id_parts,
    suffix_related,
)
from .outcomes import MAX_NAME, ReportedOutcome, TestOutcome
from .reportreader import ParsedReport, ReportReader

__all__ = [
    "MAX_MARKUP",
    "READER",
    "parse_junit",
    "pytest_node_id_parts",
    "read_junit",
    "wanted_keys",
]

_RESULTS = frozenset({"error", "failure", "skipped"})
#: Surefire's records of earlier executions, inside a <testcase>.
_RERUNS = frozenset({"flakyFailure", "flakyError", "rerunFailure", "rerunError"})
_NOT_RUN = {"disabled", "skipped", "notrun", "notexecuted", "ignored"}
#: The most of a result's text, message or type kept: its message is cut
#: there anyway.
_TEXT = 2000
#: The reruns of one <testcase> kept (a grade keeps no more: the last one
#: it keeps stands for the rest, truereward.grade.bounded).
_RERUNS_KEPT = MAX_ITEMS - 1
#: The longest tag (with its attributes), comment or processing instruction
#: read: the parser holds one whole before it reports it.
MAX_MARKUP = 4 << 20


def _malformed(where: str, why: str) -> Ungradable:
    return Ungradable("EVIDENCE_MALFORMED", f"{where}: {why}")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


class _Text:
    """The text of an element before its first child, as ``.strip()`` would
    give it, cut at :data:`_TEXT` characters: no more is kept."""

    __slots__ = ("more", "parts", "size")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.more = False  # something other than whitespace past the cut

    def add(self, piece: str) -> None:
        if self.size >= _TEXT:
            self.more = self.more or not piece.isspace()
            return
        if not self.size:
            piece = piece.lstrip()
            if not piece:
                return
        room = _TEXT - self.size
        self.parts.append(piece[:room])
        self.size += min(len(piece), room)
        if len(piece) > room and not piece[room:].isspace():
            self.more = True

    def value(self) -> str:
        head = "".join(self.parts)
        return head if self.more else head.rstrip()


class _Result:
    """A result or rerun element of a case: its ``type`` and ``message``
    attributes (cut at :data:`_TEXT` characters) and its text."""

    __slots__ = ("given", "kind", "text")

    def __init__(self, attrib: dict[str, str]) -> None:
        self.kind = (attrib.get("type") or "")[:_TEXT]
        self.given = (attrib.get("message") or "")[:_TEXT]
        self.text = _Text()

    def message(self) -> str:
        return self.given or self.text.value()


@dataclass(slots=True)
class _Case:
    """A ``<testcase>`` being read."""

    attrib: dict[str, str]
    label: str
    keys: tuple[str, ...]
    trimmed: tuple[str, ...]
    slot: int
    #: The first <error>, <failure> and <skipped>, by tag.
    results: dict[str, _Result] = field(default_factory=dict)
    reruns: list[_Result] = field(default_factory=list)
    #: Reruns past the ones kept: counted, not kept.
    left_out: int = 0

    def outcome(self) -> TestOutcome:
        get = self.attrib.get
        results = self.results
        message = ""
        raw = ""
        if not results:
            outcome, reported = ReportedOutcome.PASSED, "passed"
            status = get("status")
            if status and status.lower() in _NOT_RUN:
                outcome, reported = ReportedOutcome.SKIPPED, "skipped"
        else:
            result = results.get("error") or results.get("failure") or results["skipped"]
            raw = result.kind
            message = result.message()
            if "error" in results:
                outcome, reported = ReportedOutcome.ERROR, "error"
            elif "failure" in results:
                outcome, reported = ReportedOutcome.FAILED, "failure"
            else:
                reported = "skipped"
                outcome = (
                    ReportedOutcome.XFAIL if raw == "pytest.xfail" else ReportedOutcome.SKIPPED
                )
        time = get("time")
        duration_s: float | None = None
        if time and len(time) <= 100:
            try:
                duration_s = float(time)
            except ValueError:
                pass
            else:
                if not 0 <= duration_s < _INFINITY:
                    duration_s = None
        reruns: tuple[tuple[RerunVerdict, str], ...] = ()
        if self.reruns:
            reruns = tuple(("fail", rerun.message()[:500]) for rerun in self.reruns)
            if self.left_out:
                reruns += (("fail", f"{self.left_out} more reruns of this test left out"),)
        return TestOutcome(
            self.label,
            outcome,
            self.keys,
            message,
            duration_s,
            False,
            reported,
            raw,
            reruns,
            self.trimmed,
        )


_INFINITY = float("inf")
#: The attributes of a <testcase> its outcome reads (a time is a number;
#: one too long to be one is read as no time).
_KEPT = ("status", "time")


def _keys(classname: str, name: str) -> tuple[str, tuple[str, ...]]:
    """A case's label and the keys it is matched under."""
    if classname:
        label = f"{classname}::{name}"
        return label, (label, f"{classname}.{name}", name)
    return name, (name,)


class _Cases:
    """What the parser calls: each element's start and end, and the text.
    It keeps every named case up to the
    :data:`~truereward.readers.matching.KEEP_ALL`-th, then only those one of
    ``case_ids`` can match (all of them without ``case_ids``), each with
    only what its outcome needs. No tree is built."""

    def __init__(self, case_ids: Sequence[str] | None) -> None:
        self.case_ids = case_ids
        self.wanted: Callable[[Sequence[str]], bool] | None = None
        self.depth = 0
        self.root = ""  # the root element's local name
        self.suite = True  # whether the root is a JUnit suite; else nothing more is looked at
        self.namespaced = False
        self.tests = 0
        self.nameless = 0
        self.entries: list[TestOutcome | None] = []
        #: The open <testcase> elements, innermost last (None: not kept).
        self.cases: list[tuple[int, _Case | None]] = []
        self.budget = EntryBudget()
        self.crowded = False  # more was to be kept than a report may keep
        self.text: _Text | None = None  # the text being gathered, if any

    def start(self, tag: str, attributes: dict[str, str]) -> None:
        """An element starts: expat's tag (``uri}local`` in a namespace) and
        attributes."""
        self.depth += 1
        self.text = None  # an element's text ends at its first child
        if not self.suite:
            return
        if self.depth == 1:
            self.namespaced = "}" in tag
            self.root = _local(tag)
            self.suite = self.root in ("testsuites", "testsuite")
            return
        if self.namespaced:
            tag = _local(tag)
        cases = self.cases
        if cases and cases[-1][0] == self.depth - 1:
            case = cases[-1][1]
            if case is not None and (tag in _RESULTS or tag in _RERUNS):
                self._child(case, tag, attributes)
        if tag == "testcase":
            self._case(attributes)

    def _child(self, case: _Case, tag: str, attributes: dict[str, str]) -> None:
        """A result or rerun child of a kept case: the first result of each
        kind and every rerun are kept, with their text."""
        if tag in _RESULTS:
            if tag in case.results:
                return
            result = case.results[tag] = _Result(attributes)
        elif len(case.reruns) < _RERUNS_KEPT:
            result = _Result(attributes)
            case.reruns.append(result)
        else:
            case.left_out += 1
            return
        self.text = result.text

    def _case(self, attrib: dict[str, str]) -> None:
        self.tests += 1
        name = attrib.get("name") or ""
        classname = attrib.get("classname") or ""
        if not name.strip() or len(name) > MAX_NAME or len(classname) > MAX_NAME:
            self.nameless += 1
            self.cases.append((self.depth, None))
            return
        label, keys = _keys(classname, name)
        trimmed: tuple[str, ...] = ()
        if name.strip() != name or classname.strip() != classname:
            trimmed = _keys(classname.strip(), name.strip())[1]
        wanted = self.wanted
        if wanted is None and self.case_ids is not None and self.tests > KEEP_ALL:
            wanted = self.wanted = wanted_keys(self.case_ids)
        if wanted is None or wanted(keys) or (trimmed and wanted(trimmed)):
            if not self.budget.take(keys, trimmed):
                self.crowded = True
                self.cases.append((self.depth, None))
                return
            kept = {key: attrib[key] for key in _KEPT if key in attrib}
            self.cases.append((self.depth, _Case(kept, label, keys, trimmed, len(self.entries))))
            self.entries.append(None)  # in document order, whatever nests in it
        else:
            self.cases.append((self.depth, None))

    def end(self, tag: str) -> None:
        self.text = None
        cases = self.cases
        if cases and cases[-1][0] == self.depth:
            case = cases.pop()[1]
            if case is not None:
                self.entries[case.slot] = case.outcome()
        self.depth -= 1

    def data(self, text: str) -> None:
        if self.text is not None:
            self.text.add(text)


class _NoTree:
    """A parser target that takes nothing (the handlers are ours). It has a
    ``data`` so that the parser's own handling of an undefined entity still
    raises, as it does for a tree builder."""

    def data(self, text: str) -> None:
        return None

    def close(self) -> None:
        return None


def read_junit(
    stream: Readable,
    where: str = "junit report",
    case_ids: Sequence[str] | None = None,
) -> ParsedReport:
    """Parse JUnit XML as it is read from ``stream``, keeping the cases
    that one of ``case_ids`` can match (every named case without them;
    the first :data:`~truereward.readers.matching.KEEP_ALL` in any case);
    :class:`~truereward.codes.Ungradable` (``EVIDENCE_MALFORMED``) naming
    ``where`` when it is not a JUnit report with at least one named
    ``<testcase>``. Memory holds one chunk and the kept cases."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import DefusedXMLParser, ParseError

    target = _Cases(case_ids)
    try:
        # defusedxml's parser refuses DTDs, entities and external references;
        # the elements go to our handlers straight from its expat parser (the
        # one it guards), not through a tree builder.
        parser = DefusedXMLParser(
            target=_NoTree(), forbid_dtd=True, forbid_entities=True, forbid_external=True
        )
        expat = parser.parser
        expat.ordered_attributes = False  # attributes as a dict, built by expat
        expat.StartElementHandler = target.start
        expat.EndElementHandler = target.end
        expat.CharacterDataHandler = target.data
        if hasattr(expat, "SetReparseDeferralEnabled"):  # expat 2.6 and later
            # Deferral keeps a long token unparsed until the buffer doubles;
            # tokens are bounded here, so parse each chunk as it comes and
            # the position below is exact.
            expat.SetReparseDeferralEnabled(False)
        read = 0
        while chunk := stream.read(CHUNK):
            parser.feed(chunk)
            read += len(chunk)
            # Between feeds, the parser's position is the start of what it
            # holds unreported: a token it has not seen the end of.
            held = read - max(expat.CurrentByteIndex, 0)
            if held > MAX_MARKUP:
                raise _malformed(
                    where,
                    f"a tag, comment or processing instruction at line "
                    f"{expat.CurrentLineNumber} runs past {MAX_MARKUP} bytes; markup that "
                    "long is refused",
                )
            if target.crowded:  # nothing more is kept: refused now, not at the end
                raise _malformed(where, target.budget.why())
        parser.close()
    except DefusedXmlException as error:
        raise _malformed(
            where,
            f"refused XML construct ({type(error).__name__}): DTDs and entities are not allowed",
        ) from None
    except ParseError as error:
        raise _malformed(where, f"not well-formed XML: {error}") from None
    except (ValueError, UnicodeError) as error:
        raise _malformed(where, f"not readable XML: {error}") from None
    if target.crowded:
        raise _malformed(where, target.budget.why())
    if not target.suite:
        raise _malformed(
            where,
            f"not a JUnit report: the root element is <{target.root}>, "
            "not <testsuites> or <testsuite>",
        )
    if not target.tests:
        raise _malformed(
            where,
            "the report holds no <testcase>, so nothing shows a test ran "
            "(declared totals are not results)",
        )
    if target.nameless == target.tests:
        raise _malformed(
            where,
            f"every <testcase> of it ({target.tests}) has no name, so none can be a "
            "declared case and nothing shows which tests ran",
        )
    entries = [entry for entry in target.entries if entry is not None]
    return ParsedReport(entries=entries, tests=target.tests, nameless=target.nameless)


def parse_junit(data: bytes, where: str = "junit report") -> ParsedReport:
    """Parse JUnit XML bytes, every named case kept (:func:`read_junit`)."""
    return read_junit(io.BytesIO(data), where)


def wanted_keys(case_ids: Sequence[str]) -> Callable[[Sequence[str]], bool]:
    """Whether a case with the given keys can match one of ``case_ids``
    under the rules of :func:`matcher` (every lookup there is exact)."""

    def probes(case_id: str) -> list[str]:
        found = [case_id]
        parts = pytest_node_id_parts(case_id)
        if parts is not None:
            found += [f"{parts[0]}::{parts[1]}", parts[1]]
        if "::" in case_id:
            classname, _, name = case_id.rpartition("::")
            found.append(f"{classname.replace('::', '.')}::{name}")
        return found

    return key_filter(case_ids, probes)


def matcher(index: EntryIndex) -> Matcher:
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
                if suffix_related(index.label(entry).rsplit("::", 1)[0], classname, ".")
            ]
            if found:
                return found
        found = index.exact(case_id)
        if found or "::" not in case_id:
            return found
        classname, _, name = case_id.rpartition("::")
        return index.exact(f"{classname.replace('::', '.')}::{name}")

    return match


# pytest-rerunfailures writes a rerun as a bare <testcase>: passed_reruns.
READER = ReportReader("junit", "logs/verifier/junit.xml", read_junit, matcher, passed_reruns=True)
