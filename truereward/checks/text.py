"""Text as the checks see it: how a JSON value becomes text, how text is
compared and how it is cut into tokens.

Text is folded the Unicode way (NFKC, case folding, NFKC again) and a token
is a run of letters, digits and combining marks in any script, a Han,
Hiragana or Katakana character a token of its own, where ai-eval-forge
lower-cases and counts ``[a-z0-9]+`` (so ``café`` is ``caf`` and Greek has
no tokens). On ASCII text both rules give the same tokens and text: the
fast path is the ASCII case, not an approximation. docs/checks.md.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

import regex

__all__ = ["as_python_str", "fold", "normalize", "stringify", "tokens"]

_ASCII_TOKEN = re.compile(r"[a-z0-9]+")

#: Scripts written without spaces between words: one character, one token.
_UNSPACED = r"\p{Han}\p{Hiragana}\p{Katakana}"
_UNICODE_TOKEN = regex.compile(
    rf"[{_UNSPACED}]\p{{M}}*|[[\p{{L}}\p{{N}}\p{{M}}]--[{_UNSPACED}]]+", regex.VERSION1
)


def stringify(value: Any) -> str:
    """A case or check value as text: a string is itself; anything else is
    its compact JSON (``{"a":1}``, ``null``, ``1.0``), keys in the order they
    were written, non-ASCII characters kept. This is ai-eval-forge's rule, so
    ``"actual": null`` is the text ``null`` and ``"value": 1.0`` never equals
    the text ``1``."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def as_python_str(value: Any) -> str:
    """``str(value)``: how ai-eval-forge turns a ``contains`` value or a
    source id into text (``None`` becomes ``"None"``, ``True`` ``"True"``).
    Kept for compatibility; the checks warn when it matters."""
    return value if isinstance(value, str) else str(value)


def fold(text: str) -> str:
    """Caseless, compatibility-normalised text (NFKC, casefold, NFKC).

    ``"Straße"`` and ``"STRASSE"`` fold alike, full-width ``"ＡＢＣ"`` is
    ``"abc"`` and the ligature ``"ﬁ"`` is ``"fi"``. ASCII text is only
    lower-cased (the same result, faster)."""
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def normalize(text: str) -> str:
    """Text as ``exact`` compares it: folded (:func:`fold`), every run of
    whitespace replaced by one space, no leading or trailing whitespace."""
    return " ".join(fold(text).split())


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` in order, folded (see the module docstring).

    ``"Don't stop!"`` gives ``["don", "t", "stop"]`` (as ai-eval-forge);
    ``"Café 東京"`` gives ``["café", "東", "京"]`` (ai-eval-forge: ``["caf"]``).
    The underscore separates tokens, as in ai-eval-forge."""
    if text.isascii():
        return _ASCII_TOKEN.findall(text.lower())
    found: list[str] = _UNICODE_TOKEN.findall(fold(text))
    return found
