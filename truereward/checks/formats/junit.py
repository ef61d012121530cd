"""``junit``: JUnit XML, one ``<testcase>`` per case.

A failed case has a ``<failure>`` naming its failed checks; a case that could
not be scored has an ``<error>`` with the file, line and message (its
``type`` is ``CHECK_GAVE_UP`` when a check gave up, else ``case error``). Every
case's checks (type, score, min, detail) are in its ``<system-out>``. The
``time`` of a case is its ``latencyMs`` in seconds. Characters XML 1.0
cannot carry are replaced by U+FFFD.
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

from ...codes.checks import CHECK_GAVE_UP
from ..model import Summary
from ..suite import ScoredCase
from . import Run, failed_checks

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def text(value: str) -> str:
    """Character data safe in XML 1.0."""
    return escape(_NOT_XML.sub("\ufffd", value))


def attr(value: str) -> str:
    """A quoted attribute value safe in XML 1.0."""
    return quoteattr(_NOT_XML.sub("\ufffd", value), {"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


class JunitFormat:
    name = "junit"
    summary_first = True
    separator = ""

    def case(self, scored: ScoredCase, run: Run) -> str:
        outcome = scored.outcome
        seconds = outcome.meta.latency_ms / 1000
        opening = (
            f'    <testcase classname={attr(run.file)} name={attr(outcome.id)} time="{seconds:.3f}"'
        )
        if outcome.error is not None:
            where = f"{run.file}:{scored.line}" if scored.line is not None else run.file
            message = f"{where}: {outcome.error}"
            kind = CHECK_GAVE_UP if outcome.gave_up else "case error"
            return (
                f'{opening}>\n      <error message={attr(message)} type="{kind}">'
                f"{text(message)}</error>\n    </testcase>\n"
            )
        lines = [
            f"{check.type}: {'pass' if check.passed else 'FAIL'} score {check.score} "
            f"min {check.min}{' (optional)' if not check.required else ''}"
            f"{': ' + check.detail if check.detail else ''}"
            for check in outcome.checks
        ]
        body = f"      <system-out>{text(chr(10).join(lines))}</system-out>\n"
        if not outcome.passed:
            message = f"score {outcome.score}; failed: {failed_checks(outcome)}"
            body = (
                f'      <failure message={attr(message)} type="checks">'
                f"{text(message)}</failure>\n" + body
            )
        return f"{opening}>\n{body}    </testcase>\n"

    def head(self, run: Run, summary: Summary | None) -> str:
        assert summary is not None
        failures = summary.failed - summary.errors
        counts = (
            f'tests="{summary.total}" failures="{failures}" errors="{summary.errors}" skipped="0"'
        )
        seconds = max(run.stopped_ms - run.started_ms, 0) / 1000
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuites name="truereward checks" {counts} time="{seconds:.3f}">\n'
            f'  <testsuite name={attr(run.file)} {counts} time="{seconds:.3f}">\n'
        )

    def tail(self, run: Run, summary: Summary) -> str:
        return "  </testsuite>\n</testsuites>\n"


FORMAT = JunitFormat()
