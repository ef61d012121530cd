"""Judges through LiteLLM: the judge reader with ``{"kind": "litellm"}`` against a
chat-completions server on 127.0.0.1 (a free port, started by the test), which is
what LiteLLM calls for an ``openai/...`` model with an ``api_base``. Binary,
Likert, numeric and rubric criteria, repeated samples, and every way the provider
can fail: each is ungradable with the grader's code, never a 0."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from truereward import TaskSpec, Ungradable, fold, read
from truereward.codes import lookup

#: Every test here goes through LiteLLM, whose import alone takes seconds.
pytestmark = pytest.mark.slow

#: What the stub answers a request: (HTTP status, body bytes, seconds to wait first).
Reply = tuple[int, bytes, float]


class StubJudge(ThreadingHTTPServer):
    """POST /v1/chat/completions: each request is answered by ``respond(n, body)``
    (n counts requests from 0). Records every request and its headers."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), StubHandler)
        self.requests: list[dict[str, Any]] = []
        self.headers_seen: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.respond: Callable[[int, dict[str, Any]], Reply] = lambda n, body: (500, b"{}", 0)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/v1"


class StubHandler(BaseHTTPRequestHandler):
    server: StubJudge

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        with self.server.lock:
            number = len(self.server.requests)
            self.server.requests.append(body)
            self.server.headers_seen.append(
                {key.lower(): value for key, value in self.headers.items()}
            )
        status, payload, wait = (
            self.server.respond(number, body)
            if self.path == "/v1/chat/completions"
            else (404, b"{}", 0)
        )
        time.sleep(wait)
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except OSError:  # the client gave up (a timeout)
            pass


def completion(content: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "judge",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()


def answering(*samples: dict[str, Any]) -> Callable[[int, dict[str, Any]], Reply]:
    """Request n gets ``samples[n]`` (by criterion name: a value, confidence 0.9)."""

    def respond(number: int, body: dict[str, Any]) -> Reply:
        values = samples[number]
        answers = {name: {"value": value, "confidence": 0.9} for name, value in values.items()}
        return 200, completion(json.dumps({"answers": answers})), 0

    return respond


@pytest.fixture(autouse=True)
def judge_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key the spec names (api_key_env); without one LiteLLM refuses to call."""
    monkeypatch.setenv("STUB_JUDGE_KEY", "sk-stub")


@pytest.fixture
def stub() -> Iterator[StubJudge]:
    server = StubJudge()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def answer(tmp_path: Path) -> str:
    path = tmp_path / "answer.txt"
    path.write_text("The capital is Paris [1].\n")
    return str(path)


CRITERIA = [
    {"id": "cites", "kind": "fail_to_pass", "options": {"type": "binary"}},
    {"id": "clarity", "kind": "fail_to_pass", "options": {"type": "likert", "pass_at": 4}},
    {
        "id": "coverage",
        "kind": "fail_to_pass",
        "options": {"type": "numeric", "min": 0, "max": 10, "pass_at": 7},
    },
    {
        "id": "quality",
        "kind": "pass_to_pass",
        "options": {"type": "rubric", "levels": ["poor", "fair", "good"], "pass_at": 1},
    },
]
GOOD = {"cites": True, "clarity": 3, "coverage": 8.5, "quality": 2}


def spec(url: str, criteria: list[dict[str, Any]] = CRITERIA, **options: Any) -> TaskSpec:
    provider = {
        "kind": "litellm",
        "model": "openai/judge",
        "api_base": url,
        "api_key_env": "STUB_JUDGE_KEY",
        "timeout_s": 5,
    }
    return TaskSpec.of({"cases": criteria, "options": {"provider": provider, **options}})


def test_binary_likert_numeric_and_rubric_criteria_are_decided(
    stub: StubJudge, answer: str
) -> None:
    stub.respond = answering({**GOOD, "coverage": 6.5})
    rows = {row.id: row for row in read("judge", answer, spec(stub.base_url))}
    assert {key: row.verdict for key, row in rows.items()} == {
        "cites": "pass",
        "clarity": "pass",  # index 3 is point 4 of 5, at pass_at 4
        "coverage": "fail",  # 6.5 < 7
        "quality": "pass",
    }
    assert rows["coverage"].why == "the judge decided 6.5"
    assert rows["clarity"].measures == {"confidence": 0.9, "score": 0.75}
    assert rows["coverage"].measures == {"confidence": 0.9, "score": 0.65}
    assert rows["quality"].measures == {"confidence": 0.9, "score": 1.0}
    # One request, as LiteLLM sent it to the OpenAI-compatible endpoint.
    (body,) = stub.requests
    assert body["model"] == "judge" and body["response_format"] == {"type": "json_object"}
    asked = json.loads(body["messages"][-1]["content"].partition("\n\nQuestions:\n")[2])
    assert {item["name"]: item["kind"] for item in asked} == {
        "cites": "boolean",
        "clarity": "score",
        "coverage": "number",
        "quality": "score",
    }
    assert asked[2]["minimum"] == 0 and asked[2]["maximum"] == 10
    assert stub.headers_seen[0]["authorization"] == "Bearer sk-stub"


def test_samples_are_combined_by_majority(stub: StubJudge, answer: str) -> None:
    stub.respond = answering(
        {**GOOD, "cites": True},
        {**GOOD, "cites": False, "coverage": 2},
        {**GOOD, "cites": True, "coverage": 3},
    )
    rows = {row.id: row for row in read("judge", answer, spec(stub.base_url, samples=3))}
    assert len(stub.requests) == 3
    assert rows["cites"].verdict == "pass" and rows["cites"].why == "2 of 3 samples passed it"
    assert rows["cites"].measures == {"confidence": 0.9, "score": 1.0, "agreement": 2 / 3}
    assert rows["coverage"].verdict == "fail"
    assert rows["coverage"].measures["score"] == 0.3  # the median of 0.85, 0.2, 0.3
    assert sorted(item.name for item in rows["cites"].observations) == [
        "judge sample 1",
        "judge sample 2",
        "judge sample 3",
    ]


@pytest.mark.parametrize(
    ("samples", "agreement", "cites", "said"),
    [
        (2, "majority", [True, False], "the samples disagreed (1 passed, 1 failed; majority"),
        (3, "unanimous", [True, True, False], "the samples disagreed (2 passed, 1 failed"),
        (3, "majority", [True, None, True], "undecided in 1 of 3 samples"),
    ],
)
def test_disagreement_and_abstention_are_judge_abstained_never_a_fail(
    stub: StubJudge,
    answer: str,
    samples: int,
    agreement: str,
    cites: list[bool | None],
    said: str,
) -> None:
    stub.respond = answering(*({**GOOD, "cites": value} for value in cites))
    options = {"samples": samples, "agreement": agreement}
    rows = {row.id: row for row in read("judge", answer, spec(stub.base_url, **options))}
    assert rows["cites"].verdict == "ungradable" and rows["cites"].code == "JUDGE_ABSTAINED"
    assert said in rows["cites"].why
    assert rows["quality"].verdict == "pass"
    result = fold(list(rows.values()), case_set=CRITERIA)
    assert result.reward is None
    assert [(item.code, item.case) for item in result.refusals] == [("JUDGE_ABSTAINED", "cites")]


def not_listening() -> str:
    """A loopback URL where nothing listens (connection refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


FAILURES = {
    "HTTP 500": (lambda n, body: (500, b'{"error": {"message": "overloaded"}}', 0), "overloaded"),
    "timeout": (lambda n, body: (200, completion("{}"), 3.0), "timed out after 0.5 s"),
    "prose": (lambda n, body: (200, completion("Sure! It is good."), 0), "is not JSON"),
    "body not JSON": (lambda n, body: (200, b"<html>gateway</html>", 0), "InternalServerError"),
    "no answers object": (lambda n, body: (200, completion('{"score": 1}'), 0), "no 'answers'"),
    "out of range": (
        lambda n, body: (
            200,
            completion(
                json.dumps(
                    {
                        "answers": {
                            name: {"value": value, "confidence": 0.9}
                            for name, value in {**GOOD, "coverage": 11}.items()
                        }
                    }
                )
            ),
            0,
        ),
        "coverage.value: a number from 0.0 to 10.0, got 11",
    ),
}


@pytest.mark.parametrize("failure", [*FAILURES, "connection refused"])
def test_every_provider_failure_is_provider_failed_never_a_score(
    stub: StubJudge, answer: str, failure: str
) -> None:
    url = stub.base_url
    if failure == "connection refused":
        url, said = not_listening(), "Connection error"
    else:
        stub.respond, said = FAILURES[failure]
    task = spec(url)
    provider = dict(task.options["provider"])
    provider["timeout_s"] = 0.5
    task = TaskSpec.of({"cases": CRITERIA, "options": {"provider": provider}})
    with pytest.raises(Ungradable) as caught:
        read("judge", answer, task)
    assert caught.value.code == "PROVIDER_FAILED"
    assert said in caught.value.why, caught.value.why
    info = lookup("PROVIDER_FAILED")
    assert (info.blame.value, info.retry) == ("grader", True)
    # Nothing retried behind our back: one request, or none that arrived.
    assert len(stub.requests) == (0 if failure == "connection refused" else 1)


def test_a_judge_without_its_key_is_provider_failed(
    stub: StubJudge, answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("STUB_JUDGE_KEY")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    stub.respond = answering(GOOD)
    with pytest.raises(Ungradable) as caught:
        read("judge", answer, spec(stub.base_url))
    assert caught.value.code == "PROVIDER_FAILED" and "api_key" in caught.value.why
    assert stub.requests == []


def test_one_failed_sample_fails_the_whole_call_never_the_majority_of_the_rest(
    stub: StubJudge, answer: str
) -> None:
    good = answering(GOOD, GOOD, GOOD)

    def respond(number: int, body: dict[str, Any]) -> Reply:
        return (500, b"{}", 0) if number == 1 else good(0, body)

    stub.respond = respond
    with pytest.raises(Ungradable) as caught:
        read("judge", answer, spec(stub.base_url, samples=3))
    assert caught.value.code == "PROVIDER_FAILED"


@pytest.mark.parametrize(
    ("provider", "said"),
    [
        ({"kind": "litellm", "model": ""}, "model: a LiteLLM model name is needed"),
        ({"kind": "litellm", "model": "openai/x", "api_base": "ftp://x"}, "api_base"),
        ({"kind": "litellm", "model": "openai/x", "timeout_s": -1}, "timeout_s"),
    ],
)
def test_a_bad_provider_configuration_is_the_task_s_fault(
    answer: str, provider: dict[str, Any], said: str
) -> None:
    task = TaskSpec.of({"cases": CRITERIA, "options": {"provider": provider}})
    with pytest.raises(Ungradable) as caught:
        read("judge", answer, task)
    assert caught.value.code == "CASE_INVALID" and said in caught.value.why


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"type": "numeric", "min": 0, "max": 10}, "needs pass_at"),
        ({"type": "numeric", "min": 5, "max": 5, "pass_at": 5}, "minimum is below maximum"),
        ({"type": "likert", "points": 12}, "points must be a whole number from 2 to 11"),
        ({"type": "likert", "points": 3, "labels": ["a", "b"]}, "labels must be a list of 3"),
        ({"type": "likert", "pass_at": 0}, "pass_at must be a whole number from 1 to 5"),
        ({"type": "rubric", "levels": ["a", "b"], "pass_at": 2}, "from 0 to 1"),
        ({"type": "stars"}, "type must be boolean, binary, rubric"),
    ],
)
def test_a_bad_criterion_is_case_invalid_and_asks_nothing(
    stub: StubJudge, answer: str, options: dict[str, Any], said: str
) -> None:
    criteria = [{"id": "bad", "kind": "fail_to_pass", "options": options}]
    (row,) = read("judge", answer, spec(stub.base_url, criteria))
    assert row.code == "CASE_INVALID" and said in row.why, row.why
    assert stub.requests == []


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"samples": 0}, "samples must be a whole number from 1 to 25"),
        ({"samples": 26}, "samples must be a whole number from 1 to 25"),
        ({"agreement": "most"}, "agreement must be one of majority, unanimous"),
    ],
)
def test_bad_sampling_options_refuse_the_evidence(
    stub: StubJudge, answer: str, options: dict[str, Any], said: str
) -> None:
    with pytest.raises(Ungradable) as caught:
        read("judge", answer, spec(stub.base_url, **options))
    assert caught.value.code == "CASE_INVALID" and said in caught.value.why


def test_litellm_stays_out_of_truereward_until_a_litellm_judge_is_asked() -> None:
    script = (
        "import sys, truereward, truereward.judging, truereward.readers.judge, "
        "truereward.judging.litellm, truereward.plugin\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] in "
        "('litellm', 'openai', 'tiktoken', 'httpx')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"
