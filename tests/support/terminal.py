"""What a terminal should be given for text from runs, written from the
Unicode database rather than from the module under test."""

from __future__ import annotations

import unicodedata

#: The bidirectional formatting characters (Unicode's UAX #9, table 1 and
#: the Arabic letter mark).
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def acted_on(char: str) -> bool:
    """Whether a terminal acts on ``char`` rather than shows it (tab and line
    feed excepted: they lay text out), or UTF-8 cannot carry it."""
    category = unicodedata.category(char)
    if char in "\t\n":
        return False
    return category in ("Cc", "Cs") or char in BIDI_CONTROLS


def as_shown(text: str) -> str:
    """``text`` with what a terminal acts on as ``\\uXXXX`` escapes."""
    return "".join(f"\\u{ord(char):04x}" if acted_on(char) else char for char in text)
