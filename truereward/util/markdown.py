"""Text from runs and users placed in markdown we write (artifacts, reports,
CLI output): :func:`cell` for a table cell or running text, :func:`code` for
a code span, :func:`fence` for a code block. docs/design.md, "One of each"."""

from __future__ import annotations

import re

from .terminal import printable

__all__ = ["cell", "code", "fence"]

# UTF-8 cannot carry a lone surrogate; CommonMark shows NUL as U+FFFD.
_UNWRITABLE = re.compile("[\x00\ud800-\udfff]")
# \ and | could end a table cell, ` open a code span, < open HTML.
_ACTIVE = re.compile(r"([\\|`<])")
_BACKTICKS = re.compile("`+")
_LINE_END = re.compile("\r\n?")


def _longest_run(text: str) -> int:
    return max(map(len, _BACKTICKS.findall(text)), default=0)


def _one_line(value: object) -> str:
    """``str(value)`` on one line: each whitespace run (line breaks, tabs)
    one space, the ends trimmed, and what a terminal acts on (ESC, NUL, the
    bidirectional controls, lone surrogates) escaped by
    :func:`~truereward.util.terminal.printable`."""
    return printable(" ".join(str(value).split()))


def cell(value: object) -> str:
    """``value`` as text in a markdown table cell or a line: on one line, with
    ``\\``, ``|``, a backtick and ``<`` backslash-escaped, so it can neither
    end its cell or row nor open a code span or HTML, and reads as typed.
    Emphasis and link marks (``*``, ``_``, ``[``) are left alone: they can
    change how the text looks, never the table's shape. Control characters
    read as their ``\\uXXXX`` escapes."""
    return _ACTIVE.sub(r"\\\1", _one_line(value))


def code(value: object) -> str:
    """``value`` as one code span, on one line: fenced by one backtick more
    than its longest run of them, with a space inside each fence when it
    starts or ends with a backtick (CommonMark takes one off each end) or is
    empty. Backslashes show as typed. Not for table cells: a ``|`` in a code
    span still ends the cell there."""
    text = _one_line(value)
    bar = "`" * (_longest_run(text) + 1)
    pad = " " if text[:1] == "`" or text[-1:] == "`" or not text else ""
    return f"{bar}{pad}{text}{pad}{bar}"


def fence(value: object, info: str = "") -> str:
    """``value`` as a fenced code block (``info`` naming its language, say
    ``bash``), its lines as they are: the fence is three backticks, or one
    more than the longest run of them in the text, so no line closes it
    early. Line ends become ``\\n``; NUL and lone surrogates U+FFFD."""
    text = _LINE_END.sub("\n", _UNWRITABLE.sub("\ufffd", str(value)))
    bar = "`" * max(3, _longest_run(text) + 1)
    return f"{bar}{info}\n{text}\n{bar}"
