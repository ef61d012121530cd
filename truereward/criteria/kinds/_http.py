"""What both HTTP criteria take, and how they ask (not a kind).

Options: ``url`` (an ``http``/``https`` URL to a host the task names: the
reader option ``allowed_hosts``, loopback by default), ``timeout`` (seconds,
default 10, as rewardkit), ``follow_redirects`` (default true, as
``urllib``), ``unreachable_fails`` (default false). See
:mod:`truereward.criteria.http` for who fails when. ``unreachable_fails``
is for a task whose point is a service the agent leaves running: a request
refused, reset or out of time then fails the case instead of refusing it.
Runs only in a live workspace.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ...codes import Ungradable
from ..codes import SERVICE_UNREACHABLE
from ..context import Context
from ..http import HttpResponse, get
from ..kind import Failure, Options
from ..options import Seconds

#: The largest body read, by default and at most.
MAX_BODY = 1 << 20
MAX_BODY_LIMIT = 64 << 20


class HttpOptions(Options):
    url: Annotated[str, Field(min_length=1, max_length=8192)]
    timeout: Seconds = 10.0
    follow_redirects: bool = True
    unreachable_fails: bool = False


def ask(options: HttpOptions, context: Context, *, read_body: bool, max_body: int) -> HttpResponse:
    """GET the options' URL (module docstring)."""
    context.live("HTTP requests are made")
    try:
        return get(
            options.url,
            allowed_hosts=context.allowed_hosts,
            timeout=options.timeout,
            read_body=read_body,
            max_body=max_body,
            follow_redirects=options.follow_redirects,
        )
    except Ungradable as refused:
        if options.unreachable_fails and refused.code in (SERVICE_UNREACHABLE, "GRADER_TIMEOUT"):
            raise Failure(refused.why) from None
        raise
