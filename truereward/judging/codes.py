"""The refusal codes of the judge reader, declared ahead of the reader.

:data:`JUDGE_ABSTAINED` (the judge left the criterion undecided) and
:data:`PROVIDER_FAILED` (the judge could not be asked): neither a pass nor a
fail, both the grader's and retryable. Tiny on purpose: the entry point
``judge`` of the ``truereward.codes`` group names :data:`DECLARATION`, so
every process knows the codes without importing the calibration package;
importing this module declares them too. docs/calibrate.md, "Abstentions
and failures in grading".
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
