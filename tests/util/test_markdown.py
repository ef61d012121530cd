"""Text from runs in markdown we write: whatever a run id or a reason holds,
a table keeps its rows and cells and the text reads as typed, and a code
span holds exactly the text; read back with a real CommonMark parser."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from tests.support.markdown import (
    PARSER,
    as_read,
    as_written,
    code_blocks,
    code_spans,
    table_rows,
)
from truereward.util.markdown import cell, code, fence

#: What breaks a row or a span, or changes what a reader sees.
ACTIVE = "\\|`<>*_[]&!#-\r\n\t\x00\x0b\x0c\x1c\x85\u2028 "
#: Any text, lone surrogates included.
any_text = st.text(st.characters(exclude_categories=()) | st.sampled_from(ACTIVE))
#: Text without emphasis, link or entity marks, which cell() leaves alone.
unmarked = st.text(
    st.characters(exclude_categories=(), exclude_characters="*_[]&")
    | st.sampled_from("\\|`<>!#-\r\n\t\x00 ")
)


def one_row(text: str) -> list[list[str]]:
    return table_rows(f"| run | why |\n|---|---|\n| {text} | END |\n")


@given(any_text)
@example("a\\|b")  # the backslash must not escape our escape of the pipe
@example("x\ry")  # a carriage return alone ends a line in markdown
@example("`a|b`")  # a pipe inside a code span still ends the cell
def test_a_cell_keeps_its_table_s_shape(text: str) -> None:
    rows = one_row(cell(text))
    assert len(rows) == 1 and len(rows[0]) == 2 and rows[0][1] == "END", rows


@given(unmarked)
@example("a\\|b\\\\c")
@example("<!-- hidden")  # HTML would hide the rest
@example("<http://x>")  # an autolink shows without its brackets
@example("\\`a`")
def test_a_cell_reads_as_typed(text: str) -> None:
    assert one_row(cell(text))[0][0] == as_read(text)


@given(any_text)
def test_a_cell_is_one_line_of_writable_text(text: str) -> None:
    shown = cell(text)
    assert "\n" not in shown and "\r" not in shown
    shown.encode("utf-8")  # no lone surrogate left


@given(any_text.filter(lambda text: as_read(text) != ""))
@example("`")
@example("a``b`")
@example("\\|")
def test_a_code_span_holds_exactly_the_text(text: str) -> None:
    assert code_spans(f"Runs: {code(text)} and more.") == [as_read(text)]


def test_an_empty_code_span_is_still_a_code_span() -> None:
    (span,) = code_spans(f"Runs: {code('')} and more.")
    assert span.strip() == ""


def test_the_parser_reads_tables() -> None:
    # The tests above are only as good as the parser: it splits cells on
    # pipes, honours an escaped one and ends a row at a line break.
    assert table_rows("| a | b |\n|---|---|\n| x | y \\| z |\n| 1 | 2 |\n") == [
        ["x", "y | z"],
        ["1", "2"],
    ]
    assert PARSER.render("`a`").strip() == "<p><code>a</code></p>"


@given(any_text)
@example("echo ```\n```")  # a line of three backticks inside
@example("a\r\nb\rc")
def test_a_fenced_block_holds_exactly_the_lines(text: str) -> None:
    written = fence(text, "bash")
    blocks = code_blocks(f"Run this:\n\n{written}\n\nand more.\n")
    expected = as_written(text).replace("\r\n", "\n").replace("\r", "\n")
    assert blocks == [("bash", expected + "\n")], written
