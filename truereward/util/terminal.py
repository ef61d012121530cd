"""Text from runs on its way to a terminal: :func:`printable` shows what a
terminal would act on as escapes, and :func:`printable_stream` applies it to
everything written to a stream (the command line's standard output).
docs/design.md, "One of each"."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TextIO, cast

__all__ = ["printable", "printable_stream"]

# C0 but tab and line feed, DEL, C1; the bidirectional marks, embeddings,
# overrides and isolates; lone surrogates.
_ACTED_ON = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def printable(text: str) -> str:
    """``text`` with each character a terminal acts on rather than shows
    written as ``\\uXXXX``: control characters but tab and line feed (ESC
    starts the sequences that move the cursor, clear the screen or retitle
    the window; a lone carriage return writes over a line), the
    bidirectional controls (they reorder what is shown) and lone surrogates
    (UTF-8 cannot encode them). ``\\u`` is JSON's escape too, so JSON text
    stays JSON with the same value. Text without them is returned as is."""
    return _ACTED_ON.sub(_escaped, text)


def printable_stream(stream: TextIO) -> TextIO:
    """A text stream that writes :func:`printable` text to ``stream``; all
    else (``flush``, ``fileno``, ``isatty``, ``buffer`` for bytes, which
    passes unchanged) is the stream's own."""
    return cast(TextIO, _Printable(stream))


class _Printable:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(printable(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)
