"""A stand-in for an OpenAI-compatible LLM endpoint on loopback, for judges
reached through litellm (``openai/<model>`` with ``OPENAI_BASE_URL``).

:class:`StubLLM` serves ``POST /v1/chat/completions`` on ``127.0.0.1`` at a
port the system chooses, in a thread of the test process, in one of two
modes: ``hang`` (the request is read and never answered, until the stub
stops: a judge that times out) or ``answer`` (a chat completion whose
message content is ``content``). It counts the requests it got. Use it as a
context manager; it stops its server and releases every hung request when
it exits.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Literal


class StubLLM:
    """An OpenAI-compatible endpoint that hangs or answers (module docstring)."""

    def __init__(self, mode: Literal["hang", "answer"] = "hang", content: str = "{}") -> None:
        self.mode = mode
        self.content = content
        self.requests = 0
        self._released = threading.Event()
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                with stub._lock:
                    stub.requests += 1
                if stub.mode == "hang":
                    stub._released.wait()
                    return
                body = json.dumps(
                    {
                        "id": "stub",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "stub-model",
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": stub.content},
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        """The URL litellm's OpenAI provider is pointed at (``OPENAI_BASE_URL``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> StubLLM:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
