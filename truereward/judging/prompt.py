"""What a chat-completions judge is told and how its reply is read, for every
chat provider (the OpenAI-compatible one, the LiteLLM one).

One call per case: a system message that fixes the reply format and a user
message with the state and the questions (:func:`request_messages`); the
reply must hold one JSON answer object (a fenced ```json block is
accepted), which :func:`parse_content` reads, raising
:class:`~truereward.judging.errors.ProviderFailure` saying what is wrong.
No third-party package needed. docs/calibrate.md, "Providers", shows the
answer object.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..util.strictjson import StrictJSONError, loads
from .answers import Answer
from .errors import JudgeError, ProviderFailure
from .questions import Question, QuestionKind

__all__ = [
    "SYSTEM_PROMPT",
    "chat_request",
    "describe_question",
    "parse_content",
    "parse_reply",
    "request_messages",
]

SYSTEM_PROMPT = (
    "You are a careful, impartial judge. Answer every question about the input. "
    "Reply with exactly one JSON object and nothing else, of the form "
    '{"answers": {"<question name>": {"value": <value>, "confidence": <number from 0 to 1>, '
    '"probabilities": {"<outcome>": <number from 0 to 1>}}}}. '
    "For a boolean question the value is true or false and the outcomes are "
    '"true" and "false". For a choice question the value is one of its options and the '
    "outcomes are the options. For a score question the value is a number from 0 to the "
    "last level index (levels are listed in order, zero-based) and the outcomes are the "
    'level indices as strings ("0", "1", ...). For a number question the value is a number '
    "from its minimum to its maximum, and there are no probabilities. Use null as the value "
    "when you cannot decide. probabilities is optional; when given, its numbers add up to "
    "at most 1."
)


def describe_question(question: Question) -> dict[str, Any]:
    """How a question is shown to the judge."""
    out: dict[str, Any] = {
        "name": question.name,
        "kind": question.kind.value,
        "question": question.prompt,
    }
    if question.kind is QuestionKind.CHOICE:
        out["options"] = list(question.options)
    if question.kind is QuestionKind.SCORE:
        out["levels"] = {str(index): level for index, level in enumerate(question.levels)}
    if question.kind is QuestionKind.NUMBER:
        out["minimum"], out["maximum"] = question.minimum, question.maximum
    return out


def _state_text(state: Any) -> str:
    if isinstance(state, str):
        return state
    try:
        return json.dumps(state, ensure_ascii=False, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as error:
        raise ProviderFailure(f"the state cannot be sent as JSON: {error}") from None


def _strip_fence(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and len(stripped) >= 6:
        body = stripped[3:-3]
        first_line, _, rest = body.partition("\n")
        # ```json\n{...}\n``` : drop the language tag line.
        return rest if first_line.strip().isalpha() or not first_line.strip() else body
    return stripped


def parse_reply(body: object, questions: Sequence[Question]) -> dict[str, Answer]:
    """The answers in a chat-completions response body (already parsed JSON);
    ProviderFailure saying what is wrong. The answers are checked against
    the questions later, by :func:`~truereward.calibrate.ask`."""
    try:
        content = body["choices"][0]["message"]["content"]  # type: ignore[index]
    except (KeyError, IndexError, TypeError):
        raise ProviderFailure(
            "the response is not chat-completions JSON (no choices[0].message.content)"
        ) from None
    return parse_content(content, questions)


def parse_content(content: object, questions: Sequence[Question]) -> dict[str, Answer]:
    """The answers in the judge's reply text (a chat message's content);
    ProviderFailure saying what is wrong."""
    if not isinstance(content, str):
        raise ProviderFailure(f"choices[0].message.content is not text: {content!r:.100}")
    try:
        reply = loads(_strip_fence(content))
    except StrictJSONError as error:
        raise ProviderFailure(f"the judge's reply is not JSON: {error}: {content!r:.200}") from None
    if not isinstance(reply, dict) or not isinstance(reply.get("answers"), dict):
        raise ProviderFailure(f"the judge's reply has no 'answers' object: {content!r:.200}")
    answers: dict[str, Answer] = {}
    names = {question.name for question in questions}
    for name, raw in reply["answers"].items():
        if name not in names:
            raise ProviderFailure(f"the judge answered {name!r}, which was not asked")
        try:
            answers[name] = Answer.from_json(raw)
        except JudgeError as error:
            raise ProviderFailure(f"the judge's answer to {name!r}: {error}") from None
    return answers


def request_messages(questions: Sequence[Question], state: Any) -> list[dict[str, str]]:
    """The chat messages of one call: the system prompt, and the state with the
    questions."""
    user = (
        "Input:\n"
        + _state_text(state)
        + "\n\nQuestions:\n"
        + json.dumps([describe_question(question) for question in questions], indent=1)
    )
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user},
    ]


def chat_request(
    model: str, questions: Sequence[Question], state: Any, *, temperature: float, json_mode: bool
) -> dict[str, Any]:
    """What every chat provider sends for one case: the model, the
    :func:`request_messages`, the temperature and, in JSON mode,
    ``response_format: {"type": "json_object"}``."""
    request: dict[str, Any] = {
        "model": model,
        "messages": request_messages(questions, state),
        "temperature": temperature,
    }
    if json_mode:
        request["response_format"] = {"type": "json_object"}
    return request
