"""``http_status_equals``: a GET of ``url`` answers with ``status``.

Options: those of both HTTP criteria (:mod:`._http`) and ``status``
(default 200). The status is the final one, after redirects. Only the
status line and headers are read.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..context import Context
from ..kind import CriterionKind, Outcome
from ._http import HttpOptions, ask


class HttpStatusEquals(HttpOptions):
    status: Annotated[int, Field(ge=100, le=599)] = 200


def evaluate(options: HttpStatusEquals, context: Context) -> Outcome:
    answer = ask(options, context, read_body=False, max_body=0)
    return Outcome.binary(
        answer.status == options.status,
        f"GET {answer.url} answered {answer.status}, expected {options.status}",
    )


CRITERION = CriterionKind(
    name="http_status_equals",
    description="an HTTP GET answers with the expected status",
    options=HttpStatusEquals,
    evaluate=evaluate,
)
