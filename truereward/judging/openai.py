"""A judge behind an OpenAI-compatible chat-completions API (httpx).

Needs the ``judge`` extra. One ``POST {base_url}/chat/completions`` per
case, whose reply must hold one JSON answer object; every problem raises
:class:`~truereward.calibrate.ProviderFailure` (never an abstention, never
retried here). The provider owns an ``httpx.AsyncClient``: close it with
``async with`` or ``aclose()``, or pass ``client=``. docs/calibrate.md,
"Providers", gives the reply format.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from ..util.strictjson import StrictJSONError, loads
from .answers import Answer
from .errors import JudgeError, ProviderFailure
from .prompt import SYSTEM_PROMPT, chat_request, describe_question, parse_reply
from .questions import Question

__all__ = ["SYSTEM_PROMPT", "OpenAIProvider", "describe_question", "parse_reply"]


class OpenAIProvider:
    """A provider calling ``{base_url}/chat/completions``.

    ``base_url`` includes the API prefix (``http://127.0.0.1:8000/v1``).
    ``api_key`` is sent as a bearer token when given. ``timeout_s`` bounds
    each HTTP request. ``temperature`` defaults to 0; ``json_mode`` asks for
    ``response_format: {"type": "json_object"}`` (turn it off for servers
    that reject it). ``extra_body`` is merged into every request body.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        temperature: float = 0.0,
        json_mode: bool = True,
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise JudgeError(f"base_url: an http(s) URL, got {base_url!r}")
        if not model:
            raise JudgeError("model: a model name is needed")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self.temperature = temperature
        self.json_mode = json_mode
        self.extra_body = dict(extra_body or {})
        self._headers = {"Content-Type": "application/json", **(headers or {})}
        if api_key:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._own_client = client is None
        self._client = client
        self._loop: asyncio.AbstractEventLoop | None = None

    def request_body(self, questions: Sequence[Question], state: Any) -> dict[str, Any]:
        """The JSON body of the request for one case."""
        return chat_request(
            self.model, questions, state, temperature=self.temperature, json_mode=self.json_mode
        ) | dict(self.extra_body)

    def _client_here(self) -> httpx.AsyncClient:
        if not self._own_client:
            assert self._client is not None
            return self._client
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            # A client's connections belong to the loop that opened them.
            self._client = httpx.AsyncClient(timeout=self.timeout_s)
            self._loop = loop
        return self._client

    async def answer(self, questions: Sequence[Question], state: Any) -> Mapping[str, Answer]:
        body = self.request_body(questions, state)
        url = f"{self.base_url}/chat/completions"
        try:
            response = await self._client_here().post(url, json=body, headers=self._headers)
        except httpx.TimeoutException as error:
            raise ProviderFailure(f"{url}: timed out after {self.timeout_s} s") from error
        except httpx.HTTPError as error:
            raise ProviderFailure(f"{url}: {type(error).__name__}: {error}") from error
        if response.status_code >= 400:
            raise ProviderFailure(f"{url}: HTTP {response.status_code}: {response.text[:200]!r}")
        try:
            parsed = loads(response.content)
        except StrictJSONError as error:
            raise ProviderFailure(f"{url}: the response body is not JSON: {error}") from None
        return parse_reply(parsed, questions)

    async def aclose(self) -> None:
        """Close the client this provider opened (not one passed in)."""
        if self._own_client and self._client is not None:
            await self._client.aclose()
            self._client = None
            self._loop = None

    async def __aenter__(self) -> OpenAIProvider:
        self._client_here()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()
