"""Text from runs on its way to a terminal: every character a terminal acts
on (per the Unicode database, not the module's own list) becomes its
escape, nothing else changes, and JSON stays JSON with the same value."""

from __future__ import annotations

import io
import json
import sys

from hypothesis import example, given
from hypothesis import strategies as st

from tests.support.terminal import acted_on, as_shown
from truereward.util.terminal import printable, printable_stream

any_text = st.text(st.characters(exclude_categories=()))


def test_exactly_the_characters_a_terminal_acts_on_are_escaped() -> None:
    # Every code point once, against the Unicode database's categories.
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    assert printable(every) == as_shown(every)


@given(any_text)
@example("\x1b]0;title\x07\x1b[2J\r\u202e\x9b\ud800")
def test_nothing_a_terminal_acts_on_is_left(text: str) -> None:
    shown = printable(text)
    assert not any(map(acted_on, shown)), shown
    shown.encode("utf-8")  # no lone surrogate left


@given(any_text)
@example("\x9b\u202e\ud800 \\u001b")
def test_json_text_stays_json_with_the_same_value(text: str) -> None:
    written = json.dumps({"why": text}, ensure_ascii=False)
    assert json.loads(printable(written)) == {"why": text}


def test_a_printable_stream_escapes_text_and_passes_the_rest() -> None:
    binary = io.BytesIO()
    stream = io.TextIOWrapper(binary, encoding="utf-8")
    shown = printable_stream(stream)
    assert shown.write("a\x1bb\n") == 4
    shown.writelines(["\u202ec", "\td\n"])
    shown.flush()  # the stream's own
    assert shown.buffer is binary
    assert binary.getvalue().decode() == "a\\u001bb\n\\u202ec\td\n"
