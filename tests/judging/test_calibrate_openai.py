"""The OpenAI-compatible provider against a small chat-completions server on
127.0.0.1 (a free port, started by the test)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.chat_server import FakeChatServer
from truereward.calibrate import (
    LabelledCase,
    ProviderFailure,
    Question,
    RunOptions,
    ask,
    run,
)
from truereward.judging.openai import OpenAIProvider, parse_reply

QUESTIONS = (
    Question.boolean("relevant", text="Is the answer relevant?"),
    Question.choice("tone", ["calm", "rude"]),
    Question.score("quality", ["poor", "fair", "good"]),
)


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    chat = FakeChatServer()
    thread = threading.Thread(target=chat.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield chat
    finally:
        chat.shutdown()
        chat.server_close()
        thread.join(timeout=5)


def ask_once(server: FakeChatServer, model: str, state: Any = "yes it is", **kwargs: Any):
    async def main():
        async with OpenAIProvider(server.base_url, model, **kwargs) as provider:
            return await ask(provider, QUESTIONS, state)

    return asyncio.run(main())


def test_answers_come_back_decided(server):
    answers = ask_once(server, "judge", api_key="test-key")
    assert answers["relevant"].value is True and answers["relevant"].confidence == 0.9
    assert answers["tone"].value == "calm"
    assert answers["quality"].value == 1.5
    request = server.requests[0]
    assert request["model"] == "judge" and request["temperature"] == 0.0
    assert request["response_format"] == {"type": "json_object"}
    assert request["messages"][0]["role"] == "system"
    assert "Is the answer relevant?" in request["messages"][1]["content"]
    assert server.headers_seen[0]["Authorization"] == "Bearer test-key"


def test_no_api_key_sends_no_authorization_and_json_mode_can_be_off(server):
    ask_once(server, "judge", json_mode=False, extra_body={"seed": 7})
    assert "Authorization" not in server.headers_seen[0]
    assert "response_format" not in server.requests[0]
    assert server.requests[0]["seed"] == 7


def test_a_state_that_is_not_text_is_sent_as_json(server):
    ask_once(server, "judge", state={"answer": "yes", "n": 1})
    assert '{"answer": "yes", "n": 1}' in server.requests[0]["messages"][1]["content"]


def test_an_abstention_is_an_answer_not_a_failure(server):
    answers = ask_once(server, "judge", state="maybe")
    assert answers["relevant"].undecided


def test_a_fenced_json_reply_is_accepted(server):
    assert ask_once(server, "fenced")["relevant"].value is True


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("broken", "HTTP 500"),
        ("not-json", "response body is not JSON"),
        ("chatty", "reply is not JSON"),
        ("wrong-type", "relevant.value: true or false"),
    ],
)
def test_server_problems_are_provider_failures(server, model, message):
    with pytest.raises(ProviderFailure, match=message):
        ask_once(server, model)


def test_a_slow_server_times_out_as_a_failure(server):
    with pytest.raises(ProviderFailure, match="timed out"):
        ask_once(server, "slow", timeout_s=0.2)


def test_a_closed_port_is_a_failure():
    probe = FakeChatServer()
    url = probe.base_url
    probe.server_close()  # nothing listens there any more

    async def main():
        async with OpenAIProvider(url, "judge", timeout_s=2) as provider:
            return await ask(provider, QUESTIONS, "yes")

    with pytest.raises(ProviderFailure, match="ConnectError"):
        asyncio.run(main())


def test_a_bounded_run_over_http(server):
    cases = [
        LabelledCase(state="yes", labels={"relevant": True}, id=f"c{index}") for index in range(9)
    ] + [LabelledCase(state="no", labels={"relevant": True}, id="c9")]

    async def main():
        async with OpenAIProvider(server.base_url, "paced") as provider:
            return await run(provider, QUESTIONS, cases, RunOptions(warmup=1, concurrency=3))

    report = asyncio.run(main())
    assert len(server.requests) == 11  # one warm-up + ten cases
    assert server.max_in_flight <= 3
    stats = report.questions["relevant"]
    assert (stats.correct, stats.total) == (9, 10)
    assert [miss.case_id for miss in report.misses] == ["c9"]
    assert all(latency >= 45 for latency in report.latencies_ms)


def test_a_run_over_http_aborts_on_a_server_error(server):
    async def main():
        async with OpenAIProvider(server.base_url, "broken") as provider:
            return await run(provider, QUESTIONS, [LabelledCase(state="yes")] * 5)

    with pytest.raises(ProviderFailure, match="warm-up call"):
        asyncio.run(main())
    assert len(server.requests) == 1


def test_the_provider_works_without_a_context_manager_across_event_loops(server):
    provider = OpenAIProvider(server.base_url, "judge")
    for _ in range(2):  # a new loop each time: the client is remade for it
        answers = asyncio.run(ask(provider, QUESTIONS, "yes"))
        assert answers["relevant"].value is True


def test_parse_reply_refuses_unasked_questions():
    body = {
        "choices": [
            {"message": {"content": '{"answers": {"other": {"value": true, "confidence": 1}}}'}}
        ]
    }
    with pytest.raises(ProviderFailure, match="'other', which was not asked"):
        parse_reply(body, QUESTIONS)
    with pytest.raises(ProviderFailure, match="not chat-completions JSON"):
        parse_reply({"choices": []}, QUESTIONS)


def test_bad_configuration_is_rejected():
    from truereward.calibrate import JudgeError

    with pytest.raises(JudgeError, match="base_url"):
        OpenAIProvider("ftp://example", "m")
    with pytest.raises(JudgeError, match="model"):
        OpenAIProvider("http://127.0.0.1:9/v1", "")
