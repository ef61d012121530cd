"""A judge behind any provider LiteLLM speaks to (``litellm.acompletion``).

The OpenAI-compatible provider's call, routed by LiteLLM (the ``litellm``
extra, imported on the first call, never by the core). Every problem is a
:class:`~truereward.judging.errors.ProviderFailure`; nothing is retried here
(each sample is one request); ``LITELLM_LOCAL_MODEL_COST_MAP`` is set
before the import unless already set. docs/calibrate.md, "Judges through
LiteLLM", gives the details.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from .answers import Answer
from .errors import JudgeError, ProviderFailure
from .numbers import is_number
from .prompt import chat_request, parse_content
from .questions import Question

__all__ = ["LiteLLMProvider", "load_litellm"]


def load_litellm() -> Any:
    """The ``litellm`` module, imported without its network fetch of model
    prices; JudgeError naming the extra when it is not installed."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import litellm
    except ImportError as error:
        raise JudgeError(
            f"the litellm provider needs the litellm extra (pip install "
            f"'truereward[litellm]'): {error}"
        ) from None
    litellm.suppress_debug_info = True
    return litellm


class LiteLLMProvider:
    """A provider calling ``litellm.acompletion(model=..., messages=...)``.

    ``timeout_s`` bounds each request (LiteLLM's ``timeout``). ``temperature``
    defaults to 0; ``json_mode`` asks for ``response_format: {"type":
    "json_object"}`` (turn it off for models that reject it). ``extra`` is
    passed to every call as more keyword arguments.
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 60.0,
        temperature: float = 0.0,
        json_mode: bool = True,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise JudgeError("model: a LiteLLM model name is needed (e.g. openai/gpt-4o)")
        if api_base is not None and not api_base.startswith(("http://", "https://")):
            raise JudgeError(f"api_base: an http(s) URL, got {api_base!r}")
        if not is_number(timeout_s) or timeout_s <= 0:
            raise JudgeError(f"timeout_s: a positive number of seconds, got {timeout_s!r}")
        self.model = model
        self.api_base = api_base
        self.timeout_s = float(timeout_s)
        self.temperature = temperature
        self.json_mode = json_mode
        self.extra = dict(extra or {})
        self._api_key = api_key

    def call_arguments(self, questions: Sequence[Question], state: Any) -> dict[str, Any]:
        """The keyword arguments of ``litellm.acompletion`` for one case (the
        key is left out: it is added when calling)."""
        arguments = chat_request(
            self.model, questions, state, temperature=self.temperature, json_mode=self.json_mode
        )
        arguments.update(timeout=self.timeout_s, num_retries=0, max_retries=0)
        if self.api_base is not None:
            arguments["api_base"] = self.api_base
        return arguments | dict(self.extra)

    async def answer(self, questions: Sequence[Question], state: Any) -> Mapping[str, Answer]:
        litellm = load_litellm()
        arguments = self.call_arguments(questions, state)
        if self._api_key:
            arguments["api_key"] = self._api_key
        where = f"{self.model}" + (f" at {self.api_base}" if self.api_base else "")
        try:
            response = await litellm.acompletion(**arguments)
        except Exception as error:  # every LiteLLM error is the provider's failure
            if isinstance(error, litellm.Timeout):
                raise ProviderFailure(f"{where}: timed out after {self.timeout_s} s") from error
            said = " ".join(str(error).split())
            raise ProviderFailure(f"{where}: {type(error).__name__}: {said[:300]}") from error
        try:
            content = response.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            raise ProviderFailure(
                f"{where}: the response has no choices[0].message.content"
            ) from None
        try:
            return parse_content(content, questions)
        except ProviderFailure as error:
            raise ProviderFailure(f"{where}: {error}") from None
