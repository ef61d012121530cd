"""The judge reader: criteria decided by a judge, abstentions and provider
failures refused with retryable grader codes."""

from __future__ import annotations

import pytest

from tests.support.chat_server import FakeChatServer
from truereward import TaskSpec, Ungradable, fold, read
from truereward.codes import lookup

CRITERIA = [
    {
        "id": "cites-sources",
        "kind": "fail_to_pass",
        "options": {"question": "Does the answer cite a source?"},
    },
    {"id": "no-apology", "kind": "pass_to_pass"},
    {
        "id": "quality",
        "kind": "fail_to_pass",
        "options": {"type": "score", "levels": ["poor", "fair", "good"], "pass_at": 2},
    },
    {
        "id": "tone",
        "kind": "pass_to_pass",
        "options": {"type": "choice", "choices": ["calm", "rude"], "pass": ["calm"]},
    },
]


def spec(criteria, factory="tests.support.judge_providers:scripted", **options):
    return TaskSpec.of(
        {
            "cases": criteria,
            "options": {"provider": {"kind": "python", "factory": factory}, **options},
        }
    )


@pytest.fixture
def answer(tmp_path):
    path = tmp_path / "answer.txt"
    path.write_text("The capital is Paris [1].\n")
    return str(path)


def test_criteria_are_decided(answer):
    rows = {row.id: row for row in read("judge", answer, spec(CRITERIA))}
    assert {key: row.verdict for key, row in rows.items()} == {
        "cites-sources": "pass",
        "no-apology": "fail",
        "quality": "pass",
        "tone": "pass",
    }
    assert rows["quality"].measures == {"confidence": 0.7, "score": 1.0}


def test_an_abstention_is_judge_abstained_never_a_fail(answer):
    criteria = [
        *CRITERIA,
        {"id": "unsure", "kind": "fail_to_pass"},
        {"id": "shaky", "kind": "fail_to_pass"},
    ]
    rows = {row.id: row for row in read("judge", answer, spec(criteria, min_confidence=0.5))}
    assert rows["unsure"].code == "JUDGE_ABSTAINED"
    assert rows["shaky"].code == "JUDGE_ABSTAINED"  # below min_confidence
    result = fold(list(rows.values()), case_set=criteria)
    assert result.reward is None
    assert {item.code for item in result.refusals} == {"JUDGE_ABSTAINED"}
    info = lookup("JUDGE_ABSTAINED")
    assert (info.blame.value, info.retry) == ("grader", True)


@pytest.mark.parametrize(
    "factory",
    ["tests.support.judge_providers:failing", "tests.support.judge_providers:wrong_shape"],
)
def test_a_provider_failure_refuses_the_evidence(answer, factory):
    with pytest.raises(Ungradable) as caught:
        read("judge", answer, spec(CRITERIA, factory=factory))
    assert caught.value.code == "PROVIDER_FAILED"
    assert caught.value.blame.value == "grader"
    assert caught.value.retry is True


def test_an_openai_compatible_judge_over_http(tmp_path, monkeypatch):
    server = FakeChatServer()
    import threading

    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("JUDGE_KEY", "sk-test")
        options = {
            "provider": {
                "kind": "openai",
                "base_url": server.base_url,
                "model": "judge",
                "api_key_env": "JUDGE_KEY",
            }
        }
        criteria = [
            {
                "id": "relevant",
                "kind": "fail_to_pass",
                "options": {"question": "Is the answer relevant?"},
            }
        ]
        yes, maybe = tmp_path / "yes.txt", tmp_path / "maybe.txt"
        yes.write_text("yes, this is relevant")
        maybe.write_text("maybe")
        spec_ = TaskSpec.of({"cases": criteria, "options": options})
        assert [row.verdict for row in read("judge", str(yes), spec_)] == ["pass"]
        assert [row.code for row in read("judge", str(maybe), spec_)] == ["JUDGE_ABSTAINED"]
        assert server.headers_seen[-1].get("Authorization") == "Bearer sk-test"
    finally:
        server.shutdown()


def test_an_unreachable_http_judge_is_provider_failed(answer):
    options = {
        "provider": {
            "kind": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "model": "judge",
            "timeout_s": 2,
        }
    }
    with pytest.raises(Ungradable) as caught:
        read("judge", answer, TaskSpec.of({"cases": CRITERIA[:1], "options": options}))
    assert caught.value.code == "PROVIDER_FAILED"


@pytest.mark.parametrize(
    "options",
    [
        {"type": "score", "levels": ["a", "b"], "pass_at": 5},
        {"type": "choice", "choices": ["a"], "pass": ["b"]},
        {"type": "ranking"},
        {"question": ""},
        {"colour": "red"},
    ],
)
def test_invalid_criteria_are_case_invalid(answer, options):
    rows = read(
        "judge",
        answer,
        spec(
            [
                {"id": "c", "kind": "fail_to_pass", "options": options},
                {"id": "cites-sources", "kind": "fail_to_pass"},
            ]
        ),
    )
    assert [row.code for row in rows] == ["CASE_INVALID", ""]


def test_a_missing_provider_is_case_invalid(answer):
    with pytest.raises(Ungradable) as caught:
        read("judge", answer, TaskSpec.of({"cases": CRITERIA}))
    assert caught.value.code == "CASE_INVALID"
