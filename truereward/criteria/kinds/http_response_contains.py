"""``http_response_contains``: the body a GET of ``url`` answers with
contains ``text``.

Options: those of both HTTP criteria (:mod:`._http`), ``text``, and
``max_body`` (bytes, default 1 MiB: a larger body fails the case). The body
is decoded as UTF-8, undecodable bytes replaced (as rewardkit does), whatever
the status.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..context import Context
from ..kind import CriterionKind, Outcome
from ..values import shown
from ._http import MAX_BODY, MAX_BODY_LIMIT, HttpOptions, ask


class HttpResponseContains(HttpOptions):
    text: str
    max_body: Annotated[int, Field(ge=1, le=MAX_BODY_LIMIT)] = MAX_BODY


def evaluate(options: HttpResponseContains, context: Context) -> Outcome:
    answer = ask(options, context, read_body=True, max_body=options.max_body)
    body = answer.body.decode("utf-8", errors="replace")
    return Outcome.binary(
        options.text in body, f"GET {answer.url}: the body does not contain {shown(options.text)}"
    )


CRITERION = CriterionKind(
    name="http_response_contains",
    description="the body of an HTTP GET contains a string",
    options=HttpResponseContains,
    evaluate=evaluate,
)
