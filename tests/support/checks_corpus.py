"""A corpus of cases covering every check type and the edge cases of
ai-eval-forge 0.2.0's input handling.

- :data:`SAME`: cases ai-eval-forge scores, on which truereward must agree
  per case and per check (passed, score), and on the summary.
- :data:`IMPROVED`: cases ai-eval-forge scores where truereward
  deliberately differs (docs/checks.md, "Improvements"): each with what
  ai-eval-forge says and what truereward says.
- :data:`CRASHES`: cases ai-eval-forge crashes on; truereward reports them
  as per-case errors and scores the rest.
"""

from __future__ import annotations

import json
from typing import Any


def case(case_id: Any, actual: Any = "", *checks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    built: dict[str, Any] = {"id": case_id, "actual": actual}
    if checks:
        built["checks"] = list(checks)
    built.update(extra)
    return built


def check(kind: str | None, **params: Any) -> dict[str, Any]:
    return ({"type": kind} if kind is not None else {}) | params


DOC = json.dumps(
    {
        "user": {"name": "Alice", "age": 30, "tags": ["a", "b"], "score": 1.0, "none": None},
        "items": [{"id": 1}, {"id": 2}, {"id": 3}],
        "b[0]": "literal",
        "flag": True,
    }
)

SAME: list[dict[str, Any]] = [
    # The default check (token_f1, min 0.65) and the case fields.
    case("default-equal", "hello world", expected="hello world"),
    case("default-partial", "the cat sat", expected="the cat sat on the mat"),
    case("default-no-overlap", "abc", expected="xyz"),
    case("default-both-empty", "", expected=""),
    case("default-one-empty", "", expected="something"),
    {"id": "aliases", "output": "Paris is the capital", "reference": "Paris is the capital"},
    {"id": "actual-wins-over-output", "actual": "a b", "output": "zzz", "expected": "a b"},
    {"id": "actual-null", "actual": None, "expected": "null"},
    {"id": "actual-number", "actual": 42, "expected": "42"},
    {"id": "actual-object", "actual": {"b": 1, "a": [1, 2.5]}, "expected": '{"b":1,"a":[1,2.5]}'},
    {"id": "no-actual", "expected": ""},
    {"actual": "no id", "expected": "no id"},
    {"id": "", "actual": "empty id", "expected": "empty id"},
    {"id": 0, "actual": "zero id", "expected": "zero id"},
    case("checks-null", "x y", expected="x y", checks=None),
    case("checks-empty", "x y", expected="x z", checks=[]),
    case("checks-false", "x y", expected="x y", checks=False),
    case("checks-empty-object", "x", expected="x", checks={}),
    case("cost-top", "a", expected="a", costUsd=0.0123, latencyMs=812),
    case("cost-meta", "a", expected="a", meta={"costUsd": 0.5, "latencyMs": 100.5}),
    case("cost-both", "a", expected="a", costUsd=1, meta={"costUsd": 9, "latencyMs": 3}),
    case("cost-string", "a", expected="a", costUsd="0.25", latencyMs="7"),
    case("cost-bool", "a", expected="a", costUsd=True, latencyMs=False),
    case("meta-null", "a", expected="a", meta=None),
    case("tags-string", "a", expected="a", tags="smoke", input="what is a?"),
    case("tags-list", "a", expected="b", tags=["x", 1], input={"q": 1}),
    # exact
    case("exact-normalised", "  Hello\t\nWORLD ", check("exact"), expected="hello world"),
    case("exact-different", "hello", check("exact"), expected="hello world"),
    case("exact-value", "Forty Two", check("exact", value="forty  two"), expected="nope"),
    case("exact-value-number", "42", check("exact", value=42)),
    case("exact-value-float", "1", check("exact", value=1.0)),
    case("exact-value-null", "NULL", check("exact", value=None)),
    case("exact-value-object", '{"a":1}', check("exact", value={"a": 1})),
    case("exact-nbsp", "a\u00a0 b", check("exact"), expected="a b"),
    case("exact-accents-same", "Café", check("exact"), expected="café"),
    # contains
    case("contains-all", "The Quick Brown Fox", check("contains", value=["quick", "FOX"])),
    case("contains-some", "alpha beta", check("contains", value=["alpha", "gamma", "delta"])),
    case("contains-some-min", "alpha beta", check("contains", value=["alpha", "x", "y"], min=0.3)),
    case("contains-case", "Alpha", check("contains", value=["alpha"], caseSensitive=True)),
    case("contains-case-ok", "Alpha", check("contains", value="Alpha", caseSensitive=True)),
    case("contains-case-string", "Alpha", check("contains", value="alpha", caseSensitive="false")),
    case("contains-expected", "see the answer here", check("contains"), expected="ANSWER"),
    case("contains-nothing", "anything", check("contains")),
    case("contains-empty-list", "anything", check("contains", value=[])),
    case("contains-non-strings", "1 None True", check("contains", value=[1, None, True])),
    case("contains-unicode-lower", "ÄPFEL und Birnen", check("contains", value="äpfel")),
    # regex
    case("regex-default-i", "Order #1234 shipped", check("regex", pattern=r"order #\d+")),
    case("regex-no-flags", "Order", check("regex", pattern="order", flags="")),
    case("regex-m", "a\nb", check("regex", pattern="^b$", flags="m")),
    case("regex-no-m", "a\nb", check("regex", pattern="^b$", flags="")),
    case("regex-s", "a\nb", check("regex", pattern="a.b", flags="s")),
    case("regex-unknown-flags", "ABC", check("regex", pattern="abc", flags="gix")),
    case("regex-flags-list", "ABC\nx", check("regex", pattern="^x", flags=["i", "m"])),
    case("regex-value", "v2.0", check("regex", value=r"v\d\.\d")),
    case("regex-empty-pattern", "v2", check("regex", pattern="", value="v2")),
    case("regex-both-empty", "", check("regex", pattern="", value="")),
    case("regex-no-match", "nothing", check("regex", pattern="^something$")),
    case("regex-named", "aa", check("regex", pattern=r"(?P<x>a)(?P=x)")),
    # token_f1
    case("f1-value", "a b c d", check("token_f1", value="a b x y", min=0.5)),
    case("f1-punct", "Don't stop!", check("token_f1", min=1), expected="don t STOP"),
    case("f1-underscore", "snake_case", check("token_f1"), expected="snake case"),
    case("f1-repeats", "a a a b", check("token_f1", min=0.5), expected="a b b b"),
    case("f1-min-string", "a b", check("token_f1", min="0.5"), expected="a c"),
    case("f1-min-bool", "a b", check("token_f1", min=True), expected="a b"),
    case("f1-min-above", "a b", check("token_f1", min=2), expected="a b"),
    case("f1-min-below", "x", check("token_f1", min=-1), expected="y"),
    case("f1-min-zero", "x", check("token_f1", min=0), expected="y"),
    case("f1-exact-0.5", "a b", check("token_f1", min=0.5), expected="a c"),
    case("type-missing", "a b", check(None, min=0.5), expected="a c"),
    case("type-missing-min1", "a b", check(None), expected="a c"),
    case("type-empty", "a b", check("", min=0.4), expected="a c"),
    case("type-null", "a", {"type": None}, expected="a"),
    # required / optional
    case("optional-fails", "a", check("exact", value="b", required=False), check("json_valid")),
    case("required-zero", "a", check("exact", value="b", required=0), check("json_valid")),
    case("required-string", "a", check("exact", value="b", required="false")),
    case("all-optional-pass", "1", check("json_valid", required=False)),
    case(
        "all-optional-one-fails",
        "1",
        check("json_valid", required=False),
        check("exact", value="2", required=False),
    ),
    case("required-null", "a", check("exact", value="a", required=None)),
    # json_valid
    case("json-valid-object", '{"a": [1, 2]}', check("json_valid")),
    case("json-valid-space", "  [1, 2]\n", check("json_valid")),
    case("json-valid-string", '"text"', check("json_valid")),
    case("json-valid-null", "null", check("json_valid")),
    case("json-invalid", "{a: 1}", check("json_valid")),
    case("json-invalid-empty", "", check("json_valid")),
    case("json-valid-dup-keys", '{"a": 1, "a": 2}', check("json_valid")),
    case("json-valid-not-string", {"a": 1}, check("json_valid")),
    # json_field
    case("field-equal", DOC, check("json_field", path="user.name", value="Alice")),
    case("field-different", DOC, check("json_field", path="user.name", value="Bob")),
    case("field-index", DOC, check("json_field", path="items.1.id", value=2)),
    case("field-negative-index", DOC, check("json_field", path="items.-1.id", value=3)),
    case("field-empty-segments", DOC, check("json_field", path="..user..age.", value=30)),
    case("field-root", "[1, 2]", check("json_field", path="", value=[1, 2])),
    case("field-no-path", '{"a": 1}', check("json_field", value={"a": 1})),
    case("field-int-path", '{"5": "five"}', check("json_field", path=5, value="five")),
    case("field-int-vs-float", DOC, check("json_field", path="user.age", value=30.0)),
    case("field-float-vs-int", DOC, check("json_field", path="user.score", value=1)),
    case("field-true-vs-1", DOC, check("json_field", path="flag", value=1)),
    case("field-object", DOC, check("json_field", path="items.0", value={"id": 1})),
    case("field-list", DOC, check("json_field", path="user.tags", value=["a", "b"])),
    case("field-null-present", DOC, check("json_field", path="user.none", value=None)),
    case("field-literal-brackets", DOC, check("json_field", path="b[0]", value="literal")),
    case("field-missing-nonnull", DOC, check("json_field", path="user.email", value="x")),
    case("field-invalid-json-nonnull", "not json", check("json_field", path="a", value=1)),
    case("field-index-out", DOC, check("json_field", path="items.9.id", value=1)),
    case("field-into-string", DOC, check("json_field", path="user.name.first", value="A")),
    # citation_coverage
    case(
        "cite-brackets",
        "See [src1] and [src2].",
        check("citation_coverage"),
        sources=[{"id": "src1"}, {"id": "src2"}],
    ),
    case("cite-parens", "per (a1), (b2)", check("citation_coverage"), sources=["a1", "b2"]),
    case("cite-raw", "doc7 says so", check("citation_coverage"), sources=["doc7"]),
    case("cite-half", "[x1]", check("citation_coverage", min=0.5), sources=["x1", "y2"]),
    case("cite-half-fails", "[x1]", check("citation_coverage"), sources=["x1", "y2"]),
    case("cite-third", "[a]", check("citation_coverage", min=0.3), sources=["a", "b", "c"]),
    case("cite-none", "no sources", check("citation_coverage")),
    case("cite-empty-list", "x", check("citation_coverage", sources=[])),
    case(
        "cite-check-sources",
        "[k1]",
        check("citation_coverage", sources=[{"id": "k1"}]),
        sources=[{"id": "zz"}],
    ),
    case("cite-numbers", "see [1] and [2]", check("citation_coverage"), sources=[1, 2]),
    case("cite-no-id", "x", check("citation_coverage"), sources=[{"name": "doc"}]),
    case("cite-id-null", "None", check("citation_coverage"), sources=[{"id": None}]),
    case("cite-empty-ids", "[a]", check("citation_coverage"), sources=["", "a", {"id": ""}]),
    case("cite-duplicates", "[a]", check("citation_coverage"), sources=["a", "a", "b"]),
    case("cite-string-sources", "a b", check("citation_coverage"), sources="ab"),
    # Several checks, mixed results.
    case(
        "seven",
        json.dumps({"answer": "Paris", "n": 3, "cite": "[s1] [s2]"}),
        check("exact", value=json.dumps({"answer": "Paris", "n": 3, "cite": "[s1] [s2]"})),
        check("contains", value=["paris", "s1"]),
        check("regex", pattern=r'"n":\s*\d'),
        check("token_f1", value="answer paris n 3", min=0.5, required=False),
        check("json_valid"),
        check("json_field", path="n", value=3),
        check("citation_coverage", min=0.5),
        sources=[{"id": "s1"}, {"id": "s2"}],
        costUsd=0.002,
        latencyMs=1234,
    ),
    case(
        "seven-mixed",
        '{"answer": "Lyon"}',
        check("exact", value="Paris"),
        check("contains", value=["lyon", "paris"], min=0.5),
        check("json_field", path="answer", value="Lyon"),
        check("token_f1", value="the answer is lyon", min=0.2),
    ),
]

#: Cases where truereward deliberately differs. ``aef`` is what ai-eval-forge
#: 0.2.0 says for the first check (passed, score), ``ours`` what truereward
#: says; ``why`` names the improvement in docs/checks.md.
IMPROVED: list[dict[str, Any]] = [
    {
        "why": "thresholds without float artefacts",
        "case": case(
            "f1-0.75", "the cat sat", check("token_f1", min=0.75), expected="the cat sat on mat"
        ),
        "aef": (False, 0.75),
        "ours": (True, 0.75),
    },
    {
        "why": "thresholds without float artefacts",
        "case": case("f1-0.2", "a", check("token_f1", min=0.2), expected="a b c d e f g h i"),
        "aef": (False, 0.2),
        "ours": (True, 0.2),
    },
    {
        "why": "thresholds: the reported score is compared",
        "case": case("f1-2/3", "a b", check("token_f1", min=0.6667), expected="a"),
        "aef": (False, 0.6667),
        "ours": (True, 0.6667),
    },
    {
        "why": "Unicode-aware tokens",
        "case": case("f1-cafe", "café", check("token_f1", min=1), expected="caf"),
        "aef": (True, 1.0),
        "ours": (False, 0.0),
        "note": "ai-eval-forge reads 'café' as the token 'caf'",
    },
    {
        "why": "Unicode-aware tokens",
        "case": case(
            "f1-greek", "Καλημέρα κόσμε", check("token_f1", min=1), expected="καλημέρα ΚΌΣΜΕ"
        ),
        "aef": (True, 1.0),
        "ours": (True, 1.0),
        "note": "ai-eval-forge finds no token on either side (both empty: 1.0)",
    },
    {
        "why": "Unicode-aware tokens",
        "case": case("f1-greek-wrong", "Καλημέρα", check("token_f1"), expected="κόσμε"),
        "aef": (True, 1.0),
        "ours": (False, 0.0),
    },
    {
        "why": "Unicode-aware tokens",
        "case": case("f1-han", "東京は晴れ", check("token_f1", min=0.5), expected="東京は雨"),
        "aef": (True, 1.0),
        "ours": (True, 0.6667),
    },
    {
        "why": "Unicode-aware exact",
        "case": case("exact-sharp-s", "Straße", check("exact"), expected="STRASSE"),
        "aef": (False, 0.0),
        "ours": (True, 1.0),
    },
    {
        "why": "Unicode-aware exact",
        "case": case("exact-fullwidth", "ＡＢＣ １２３", check("exact"), expected="abc 123"),
        "aef": (False, 0.0),
        "ours": (True, 1.0),
    },
    {
        "why": "json_field: missing is not null",
        "case": case("field-missing-null", '{"a": 1}', check("json_field", path="b", value=None)),
        "aef": (True, 1.0),
        "ours": (False, 0.0),
    },
    {
        "why": "json_field: missing is not null",
        "case": case("field-missing-novalue", '{"a": 1}', check("json_field", path="b")),
        "aef": (True, 1.0),
        "ours": (False, 0.0),
    },
    {
        "why": "json_field: missing is not null",
        "case": case(
            "field-through-null", '{"a": null}', check("json_field", path="a.b", value=None)
        ),
        "aef": (True, 1.0),
        "ours": (False, 0.0),
    },
    {
        "why": "json_field: an output that is not JSON is not null",
        "case": case("field-not-json-null", "oops", check("json_field", path="a", value=None)),
        "aef": (True, 1.0),
        "ours": (False, 0.0),
    },
    {
        "why": "json_field: a.b[0] paths",
        "case": case("field-brackets", DOC, check("json_field", path="items[1].id", value=2)),
        "aef": (False, 0.0),
        "ours": (True, 1.0),
    },
    {
        "why": "json_field: exists",
        "case": case("field-exists", DOC, check("json_field", path="user.age", exists=True)),
        "aef": (False, 0.0),
        "ours": (True, 1.0),
    },
    {
        "why": "json_field: exists",
        "case": case("field-exists-null", DOC, check("json_field", path="user.none", exists=True)),
        "aef": (True, 1.0),
        "ours": (True, 1.0),
        "note": "same verdict; ai-eval-forge compared null with null",
    },
    {
        "why": "json_field: exists",
        "case": case("field-not-exists", DOC, check("json_field", path="user.email", exists=False)),
        "aef": (True, 1.0),
        "ours": (True, 1.0),
        "note": "same verdict; ai-eval-forge compared a missing field with null",
    },
    {
        "why": "json_valid: RFC 8259",
        "case": case("json-nan", "NaN", check("json_valid")),
        "aef": (True, 1.0),
        "ours": (False, 0.0),
    },
    {
        "why": "json_valid: RFC 8259",
        "case": case("json-infinity", '{"x": -Infinity}', check("json_valid")),
        "aef": (True, 1.0),
        "ours": (False, 0.0),
    },
    {
        "why": "whole-id citations",
        "case": case("cite-prefix", "see [src10]", check("citation_coverage"), sources=["src1"]),
        "aef": (True, 1.0),
        "ours": (False, 0.0),
    },
    {
        "why": "whole-id citations",
        "case": case("cite-inside-word", "cabbage", check("citation_coverage"), sources="ab"),
        "aef": (True, 1.0),
        "ours": (False, 0.0),
    },
]

#: Cases ai-eval-forge crashes on (each would abort its whole suite), with a
#: piece of the message truereward gives for it.
CRASHES: list[tuple[Any, str]] = [
    (["not", "an", "object"], "a case is a JSON object"),
    (42, "a case is a JSON object"),
    (case("checks-object", "a", checks={"type": "exact"}), "checks: a list of checks"),
    (case("checks-string", "a", checks="exact"), "checks: a list of checks"),
    (case("checks-number", "a", checks=5), "checks: a list of checks"),
    (case("check-string", "a", "exact"), "checks[0]: a check is an object"),
    (case("unknown-type", "a", check("exactt")), "unknown check type 'exactt'"),
    (case("type-number", "a", check(5)), "unknown check type 5"),  # type: ignore[arg-type]
    (case("min-null", "a", check("exact", min=None)), "min: a number"),
    (case("min-text", "a", check("exact", min="high")), "min: a number"),
    (case("min-list", "a", check("exact", min=[1])), "min: a number"),
    (case("regex-none", "a", check("regex")), "pattern: missing"),
    (case("regex-number", "a", check("regex", pattern=5)), "pattern: a string"),
    (case("regex-invalid", "a", check("regex", pattern="(unclosed")), "not a valid regular"),
    (case("regex-flags-null", "a", check("regex", pattern="a", flags=None)), "flags:"),
    (case("regex-flags-number", "a", check("regex", pattern="a", flags=2)), "flags:"),
    (case("cite-sources-number", "a", check("citation_coverage", sources=7)), "sources:"),
    (case("cite-case-sources-true", "a", check("citation_coverage"), sources=True), "sources:"),
    (case("cost-null", "a", costUsd=None), "costUsd: a number"),
    (case("cost-text", "a", costUsd="cheap"), "costUsd: a number"),
    (case("latency-object", "a", latencyMs={}), "latencyMs: a number"),
    (case("meta-string", "a", meta="fast"), "meta: an object"),
    (case("meta-list", "a", meta=[1]), "meta: an object"),
    (case("two-bad-checks", "a", check("nope"), check("exact", min=None)), "checks[1]"),
]
