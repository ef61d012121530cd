"""Providers for the judge reader's tests, named by import path as a task
spec would name them (``{"kind": "python", "factory": ...}``)."""

from __future__ import annotations

from typing import Any

from truereward.calibrate import Answer
from truereward.judging.testing import ScriptedProvider

#: What the scripted judge answers, by question name.
ANSWERS: dict[str, Any] = {
    "cites-sources": Answer(True, 0.9),
    "no-apology": Answer(False, 0.8),
    "quality": Answer(1.6, 0.7),
    "tone": Answer("calm", 0.95),
    "unsure": Answer(None, 0.2),
    "shaky": Answer(True, 0.3),
}


def scripted() -> ScriptedProvider:
    return ScriptedProvider(lambda questions, state: {q.name: ANSWERS[q.name] for q in questions})


def failing() -> ScriptedProvider:
    return ScriptedProvider(
        lambda questions, state: {}, fail_on_call=1, failure=ConnectionError("judge unreachable")
    )


def wrong_shape() -> ScriptedProvider:
    return ScriptedProvider(
        lambda questions, state: {q.name: Answer("maybe", 0.9) for q in questions}
    )
