"""Reading a case file as a stream: a JSON array of cases, or JSONL.

A file whose first non-blank character is ``[`` is one JSON array, any
other one case a line (blank lines skipped; a BOM allowed). Each case's
JSON text goes out with its line and position (:class:`RawCase`), in chunks
(:class:`CaseChunk`) parsed where they are scored; memory holds one chunk.
Problems are attached to a case, never raised: a line not UTF-8, a syntax
error in an array, or a case over :data:`MAX_CASE_BYTES` (standard input
can be endless) becomes a case with a ``problem``, the last when the rest
cannot be read. docs/checks.md, "Case files".
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import BinaryIO, NamedTuple

from ..util.exceptions import TruerewardError

__all__ = [
    "CHUNK",
    "MAX_CASE_BYTES",
    "CaseChunk",
    "RawCase",
    "cases_in",
    "read_cases",
    "read_chunks",
]

#: Bytes read at a time.
CHUNK = 1 << 18
#: The longest case read (a JSONL line, an array element; characters for
#: an element): far above a model's answer and its checks.
MAX_CASE_BYTES = 16 << 20

_WHITESPACE = b" \t\r\n\f\v"
_JSON_WHITESPACE = " \t\r\n"
#: How far before the end of the buffered text a JSON syntax error must be to
#: be real rather than the end of a chunk (the longest partial literal,
#: ``-Infinity``, is 9 characters).
_MARGIN = 16
_ASCII_BLANK_LINE = re.compile(rb"^[ \t\r\f\v\x1c-\x1f]*$", re.MULTILINE)
#: Most cases in one chunk of a JSON array.
_ARRAY_GROUP = 2000


class RawCase(NamedTuple):
    """One case as read: its JSON ``text`` (``None`` when it could not be
    read), the ``line`` it starts on (1-based), its ``position`` among
    the file's cases (0-based) and, when it could not be read, the ``problem``."""

    line: int
    position: int
    text: str | None
    problem: str | None = None


class CaseChunk(NamedTuple):
    """Consecutive cases of one file, as they go to a worker: ``data`` is
    either whole JSONL lines (bytes; the first is line ``first_line`` and
    the first case in them has index ``first_index``) or cases already split
    out of a JSON array. :func:`cases_in` lists its cases."""

    first_line: int
    first_index: int
    data: bytes | tuple[RawCase, ...]


def read_cases(stream: BinaryIO) -> Iterator[RawCase]:
    """The cases of a JSON-array or JSONL byte stream, in order."""
    for chunk in read_chunks(stream):
        yield from cases_in(chunk)


def read_chunks(stream: BinaryIO) -> Iterator[CaseChunk]:
    """The cases of a JSON-array or JSONL byte stream in chunks of about
    :data:`CHUNK` bytes, in order. JSONL chunks are cut at line ends without
    looking at the lines beyond counting the blank ones, so that splitting
    a large file costs the reading process almost nothing."""
    head = stream.read(CHUNK)
    # A stream may hand out fewer bytes than asked: read on until a BOM split
    # across reads can be told from a start that is not one.
    while head and len(head) < len(codecs.BOM_UTF8) and codecs.BOM_UTF8.startswith(head):
        more = stream.read(CHUNK)
        if not more:
            break
        head += more
    if head.startswith(codecs.BOM_UTF8):
        head = head[len(codecs.BOM_UTF8) :]
    start = head.lstrip(_WHITESPACE)
    while not start and head and len(head) <= MAX_CASE_BYTES:
        # Only whitespace so far: look further for the first character (not
        # forever: past a case's length it is read as lines, which are bounded).
        more = stream.read(CHUNK)
        if not more:
            break
        head += more
        start = head.lstrip(_WHITESPACE)
    if start.startswith(b"["):
        yield from _array_chunks(head, stream)
    else:
        yield from _line_chunks(head, stream)


def cases_in(chunk: CaseChunk) -> Iterator[RawCase]:
    """The cases of one chunk, in order."""
    if isinstance(chunk.data, tuple):
        yield from chunk.data
        return
    index = chunk.first_index
    for offset, raw in enumerate(_split_lines(chunk.data)):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            problem = f"not UTF-8 text (byte {error.start + 1} of the line)"
            yield RawCase(chunk.first_line + offset, index, None, problem)
            index += 1
            continue
        if not text.strip():
            continue
        yield RawCase(chunk.first_line + offset, index, text)
        index += 1


def _split_lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    return lines


def _cases_among(data: bytes) -> int:
    """How many cases the lines in ``data`` hold: the lines that are not
    blank (a line that is not UTF-8 is a case, reported as unreadable)."""
    if data.isascii():
        # The usual case, without decoding: lines minus blank lines (ASCII
        # whitespace is what str.isspace() says of ASCII characters).
        count = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        blank = len(_ASCII_BLANK_LINE.findall(data))
        if data.endswith(b"\n"):
            blank -= 1  # the empty match after the last newline is no line
        return count - blank
    return sum(1 for line in _split_lines(data) if line.decode("utf-8", "replace").strip())


def _line_chunks(head: bytes, stream: BinaryIO) -> Iterator[CaseChunk]:
    line = 1
    index = 0
    parts: list[bytes] = []
    pending = 0  # bytes in parts: the start of a line longer than a chunk
    more = head
    while True:
        end = more.find(b"\n")
        if pending + (len(more) if end == -1 else end) > MAX_CASE_BYTES:
            # The line begun in parts is too long: not read on to its end
            # (it may have none), and nothing after it is read.
            problem = (
                f"a case longer than {MAX_CASE_BYTES} bytes; the rest of the file was not read"
            )
            yield CaseChunk(line, index, (RawCase(line, index, None, problem),))
            return
        if more and end == -1:
            pending += len(more)
            parts.append(more)  # a line longer than a chunk goes on
            more = stream.read(CHUNK)
            continue
        parts.append(more)
        data = b"".join(parts)
        cut = data.rfind(b"\n") + 1 if more else len(data)
        block = data[:cut]
        parts = [data[cut:]]
        pending = len(parts[0])
        if block:
            yield CaseChunk(line, index, block)
            line += block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
            index += _cases_among(block)
        if not more:
            return
        more = stream.read(CHUNK)


def _array_chunks(head: bytes, stream: BinaryIO) -> Iterator[CaseChunk]:
    group: list[RawCase] = []
    size = 0
    for case in _array(head, stream):
        group.append(case)
        size += len(case.text or "")
        if size >= CHUNK or len(group) >= _ARRAY_GROUP:
            yield CaseChunk(group[0].line, group[0].position, tuple(group))
            group = []
            size = 0
    if group:
        yield CaseChunk(group[0].line, group[0].position, tuple(group))


class _ArrayReader:
    """A JSON array read element by element from a byte stream."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self.stream = stream
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.buffer = ""
        self.position = 0
        #: Newlines in the text dropped from the buffer and up to ``counted``.
        self.lines_before = 0
        self.counted = 0
        self.eof = False
        self.scanner = json.JSONDecoder()
        self._feed(head)

    def _feed(self, data: bytes) -> None:
        try:
            self.buffer += self.decoder.decode(data, final=not data)
        except UnicodeDecodeError:
            raise _Broken("not UTF-8 text") from None

    def more(self) -> bool:
        """Read another chunk; False at the end of the stream."""
        if self.eof:
            return False
        data = self.stream.read(CHUNK)
        if not data:
            self.eof = True
            self._feed(b"")
            return False
        if self.position > CHUNK:
            # Drop what was consumed, keeping the line count.
            self.lines_before += self.buffer.count("\n", self.counted, self.position)
            self.buffer = self.buffer[self.position :]
            self.position = 0
            self.counted = 0
        self._feed(data)
        return True

    def line_at(self, position: int) -> int:
        """The 1-based line of ``position`` in the buffer (positions only
        move forward)."""
        self.lines_before += self.buffer.count("\n", self.counted, position)
        self.counted = position
        return self.lines_before + 1

    def skip_whitespace(self) -> str:
        """The next character that is not JSON whitespace (``""`` at the end)."""
        while True:
            while self.position < len(self.buffer):
                char = self.buffer[self.position]
                if char not in _JSON_WHITESPACE:
                    return char
                self.position += 1
            if not self.more():
                return ""

    def element(self) -> str:
        """The JSON text of the element at the current position."""
        while True:
            # Reading more may drop the consumed text and move the position.
            start = self.position
            if len(self.buffer) - start > MAX_CASE_BYTES:
                raise _Broken(f"a case longer than {MAX_CASE_BYTES} characters")
            try:
                _, end = self.scanner.raw_decode(self.buffer, start)
            except json.JSONDecodeError as error:
                if self._incomplete(error) and self.more():
                    continue
                line = self.line_at(start) + self.buffer.count("\n", start, error.pos)
                raise _Broken(f"invalid JSON at line {line}: {error.msg}") from None
            except RecursionError:
                raise _Broken("invalid JSON: nested too deeply") from None
            if end >= len(self.buffer) and self.more():
                # A number at the very end of the buffer may go on in the
                # next chunk: decode it again with more text.
                continue
            self.position = end
            return self.buffer[start:end]

    def _incomplete(self, error: json.JSONDecodeError) -> bool:
        """Whether ``error`` may only mean the buffer ends too early."""
        if self.eof:
            return False
        if error.msg.startswith("Unterminated string"):
            # A JSON string never holds a raw newline: one after its start
            # means the string is broken, not cut.
            return self.buffer.find("\n", error.pos) == -1
        return error.pos >= len(self.buffer) - _MARGIN


class _Broken(TruerewardError):
    """The array cannot be read further."""


def _array(head: bytes, stream: BinaryIO) -> Iterator[RawCase]:
    index = 0
    line = 1
    try:
        reader = _ArrayReader(head, stream)
        reader.skip_whitespace()
        reader.position += 1  # the "["
        char = reader.skip_whitespace()
        if char == "]":
            reader.position += 1
        else:
            while True:
                if not char:
                    raise _Broken("the array is not closed (the file ends inside it)")
                line = reader.line_at(reader.position)
                text = reader.element()
                yield RawCase(line, index, text)
                index += 1
                char = reader.skip_whitespace()
                if char == ",":
                    reader.position += 1
                    char = reader.skip_whitespace()
                    if char == "]":
                        line = reader.line_at(reader.position)
                        raise _Broken("a comma before the closing ] (JSON allows none)")
                    continue
                if char == "]":
                    reader.position += 1
                    break
                line = reader.line_at(reader.position)
                if not char:
                    raise _Broken("the array is not closed (the file ends inside it)")
                raise _Broken(f"expected ',' or ']' after a case, found {char!r}")
        if reader.skip_whitespace():
            line = reader.line_at(reader.position)
            raise _Broken("unexpected text after the array's closing ]")
    except _Broken as broken:
        yield RawCase(line, index, None, f"{broken}; the rest of the file was not read")
