"""Reading a case file as a stream: a JSON array of cases, or JSONL.

As in ai-eval-forge, a file whose first character that is not whitespace is
``[`` is one JSON array; any other file has one case per line, and lines
that hold only whitespace are skipped. A UTF-8 byte-order mark is allowed.

The reader hands out each case's JSON *text* with the line it starts on and
its position (:class:`RawCase`); parsing the text happens where the case is
scored (possibly in another process). Memory does not grow with the number
of cases: one chunk of the file and one case are held at a time.

Problems are attached to the case they concern, never raised: a JSONL line
that is not UTF-8 becomes a case with a ``problem``; in a JSON array, a
syntax error ends the array (where the next element starts cannot be known),
so it becomes one last case with a ``problem`` that says the rest of the
file was not read.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

__all__ = ["CHUNK", "RawCase", "read_cases"]

#: Bytes read at a time.
CHUNK = 1 << 20

_WHITESPACE = b" \t\r\n\f\v"
_JSON_WHITESPACE = " \t\r\n"
#: How far before the end of the buffered text a JSON syntax error must be to
#: be real rather than the end of a chunk (the longest partial literal,
#: ``-Infinity``, is 9 characters).
_MARGIN = 16


@dataclass(frozen=True, slots=True)
class RawCase:
    """One case as read: its JSON ``text`` (``None`` when it could not be
    read), the ``line`` it starts on (1-based), its ``index`` among the
    file's cases (0-based) and, when it could not be read, the ``problem``."""

    line: int
    index: int
    text: str | None
    problem: str | None = None


def read_cases(stream: BinaryIO) -> Iterator[RawCase]:
    """The cases of a JSON-array or JSONL byte stream, in order."""
    head = stream.read(CHUNK)
    if head.startswith(codecs.BOM_UTF8):
        head = head[len(codecs.BOM_UTF8) :]
    start = head.lstrip(_WHITESPACE)
    while not start and head:
        # Only whitespace so far: look further for the first character.
        more = stream.read(CHUNK)
        if not more:
            break
        head += more
        start = head.lstrip(_WHITESPACE)
    if start.startswith(b"["):
        yield from _array(head, stream)
    else:
        yield from _lines(head, stream)


def _lines(head: bytes, stream: BinaryIO) -> Iterator[RawCase]:
    index = 0
    for number, raw in enumerate(_physical_lines(head, stream), start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            yield RawCase(number, index, None, f"not UTF-8 text (byte {error.start + 1})")
            index += 1
            continue
        if not text.strip():
            continue
        yield RawCase(number, index, text)
        index += 1


def _physical_lines(head: bytes, stream: BinaryIO) -> Iterator[bytes]:
    """The lines of ``head`` followed by the rest of ``stream``, without
    their ``\\n``."""
    parts = head.split(b"\n")
    last = parts.pop()
    yield from parts
    last += stream.readline()
    while last:
        yield last.removesuffix(b"\n")
        last = stream.readline()


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
        except UnicodeDecodeError as error:
            raise _Broken(f"not UTF-8 text (byte {error.start + 1} of a chunk)") from None

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
            return "\n" not in self.buffer[error.pos :]
        return error.pos >= len(self.buffer) - _MARGIN


class _Broken(Exception):
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
