"""Markdown we write, read back as a reader sees it: a CommonMark parser
with GFM tables (markdown-it-py), not our own idea of the syntax."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

from .terminal import as_shown

PARSER = MarkdownIt("commonmark").enable("table")
#: Names that break a table or a code span written without care: a backslash
#: before a pipe, pipes in a code span, HTML, line breaks.
HOSTILE = ("a\\|b", "`x|y`", "<!--", "two\rlines\nhere")


def as_written(text: str) -> str:
    """``text`` as markdown can carry it: NUL (CommonMark's rule) and lone
    surrogates (UTF-8's) as U+FFFD."""
    return "".join("\ufffd" if c == "\x00" or "\ud800" <= c <= "\udfff" else c for c in text)


def as_read(text: str) -> str:
    """What a reader should see of ``text`` on one line of markdown: each
    whitespace run one space, what a terminal acts on as its escape."""
    return as_shown(" ".join(text.split()))


def shown(inline: Token) -> str:
    """The text an inline token shows: its text and code spans, marks
    (emphasis, links) left out."""
    return "".join(
        child.content if child.type in ("text", "code_inline") else "\n"
        for child in inline.children or []
        if child.type in ("text", "code_inline", "softbreak", "hardbreak")
    )


def table_rows(text: str) -> list[list[str]]:
    """The body rows of every table in ``text``, each as its cells' shown text."""
    tokens = PARSER.parse(text)
    rows: list[list[str]] = []
    in_body = False
    for index, token in enumerate(tokens):
        if token.type in ("tbody_open", "tbody_close"):
            in_body = token.type == "tbody_open"
        elif in_body and token.type == "tr_open":
            rows.append([])
        elif in_body and token.type == "td_open":
            rows[-1].append(shown(tokens[index + 1]))
    return rows


def code_spans(text: str) -> list[str]:
    """The contents of every code span in ``text``."""
    return [
        child.content
        for token in PARSER.parse(text)
        if token.type == "inline"
        for child in token.children or []
        if child.type == "code_inline"
    ]


def code_blocks(text: str) -> list[tuple[str, str]]:
    """(info, content) of every fenced code block in ``text``."""
    return [(token.info, token.content) for token in PARSER.parse(text) if token.type == "fence"]
