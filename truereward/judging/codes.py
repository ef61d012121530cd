"""The refusal codes of the judge reader, declared ahead of the reader.

A judge reader asks an LLM judge about a run's criteria. Two outcomes are
neither a pass nor a fail, and both are the grader's doing, not the run's:

- :data:`JUDGE_ABSTAINED`: the judge answered but left the criterion
  undecided (below its confidence threshold, a tie, or no answer at all).
- :data:`PROVIDER_FAILED`: the judge could not be asked (network error,
  timeout, an HTTP error, a response that is not a valid answer).

Both are retryable: asking again may give an answer. This module is tiny on
purpose: the entry point ``judge`` of the ``truereward.codes`` group names
:data:`DECLARATION`, so every process (an xdist controller, a Prefect worker)
knows these codes without importing the calibration package. Importing this
module also declares them (an identical redeclaration is a no-op).
"""

from __future__ import annotations

from typing import Any

from ..codes import declare

__all__ = ["DECLARATION", "JUDGE_ABSTAINED", "PROVIDER_FAILED"]

#: The judge left a criterion undecided: an abstention, never a fail.
JUDGE_ABSTAINED = "JUDGE_ABSTAINED"
#: The judge's provider failed; nothing was decided.
PROVIDER_FAILED = "PROVIDER_FAILED"

#: The declaration in the shape :func:`truereward.codes.declare` takes.
DECLARATION: dict[str, dict[str, Any]] = {
    JUDGE_ABSTAINED: {
        "meaning": "the judge left the criterion undecided (an abstention: below its "
        "confidence threshold, a tie, or no answer)",
        "blame": "grader",
        "retry": True,
    },
    PROVIDER_FAILED: {
        "meaning": "the judge's provider failed (network error, timeout, HTTP error, or a "
        "response that is not a valid answer)",
        "blame": "grader",
        "retry": True,
    },
}

declare(DECLARATION)
