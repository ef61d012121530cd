"""A small OpenAI-compatible chat-completions server on 127.0.0.1 (a free
port) for the judge's tests: the model name picks its behaviour, its
answers follow from the input text."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeChatServer(ThreadingHTTPServer):
    """Speaks enough of POST /v1/chat/completions. The model name picks the
    behaviour; answers are computed from the input text, so they are
    deterministic. Records every request and the most requests in flight."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), ChatHandler)
        self.requests: list[dict[str, Any]] = []
        self.headers_seen: list[dict[str, str]] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/v1"


def judge(body: dict[str, Any]) -> str:
    """The fake judge: 'yes' in the input means relevant; 'maybe' abstains."""
    user = body["messages"][-1]["content"]
    text, _, questions_json = user.partition("\n\nQuestions:\n")
    questions = json.loads(questions_json)
    answers = {}
    for question in questions:
        if question["kind"] == "boolean":
            value = None if "maybe" in text else "yes" in text
            answers[question["name"]] = {
                "value": value,
                "confidence": 0.9 if value is not None else 0.4,
                "probabilities": {"true": 0.9, "false": 0.1}
                if value
                else {"true": 0.1, "false": 0.9},
            }
        elif question["kind"] == "choice":
            answers[question["name"]] = {"value": question["options"][0], "confidence": 0.8}
        else:
            answers[question["name"]] = {"value": 1.5, "confidence": 0.7}
    return json.dumps({"answers": answers})


class ChatHandler(BaseHTTPRequestHandler):
    server: FakeChatServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def reply(self, status: int, payload: Any) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        # A client that gave up waiting (the judge's timeout tests) has closed
        # the connection: nothing to answer, and no traceback in the suite's log.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.end_headers()
            self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        server = self.server
        with server.lock:
            server.requests.append(body)
            server.headers_seen.append(dict(self.headers))
            server.in_flight += 1
            server.max_in_flight = max(server.max_in_flight, server.in_flight)
        try:
            if self.path != "/v1/chat/completions":
                self.reply(404, {"error": {"message": f"no route {self.path}"}})
                return
            model = body.get("model")
            if model == "slow":
                time.sleep(1.0)
            if model == "paced":
                time.sleep(0.05)
            if model == "broken":
                self.reply(500, {"error": {"message": "model overloaded"}})
                return
            if model == "not-json":
                self.reply(200, b"<html>gateway</html>")
                return
            content = judge(body)
            if model == "chatty":
                content = "Sure! Here you go."
            if model == "fenced":
                content = f"```json\n{content}\n```"
            if model == "wrong-type":
                content = json.dumps(
                    {
                        "answers": {
                            q: {"value": "yes", "confidence": 0.5}
                            for q in ("relevant", "tone", "quality")
                        }
                    }
                )
            self.reply(
                200,
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": content},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                },
            )
        finally:
            with server.lock:
                server.in_flight -= 1
