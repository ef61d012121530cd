"""One HTTP GET for a criterion, only to a host the task names, bounded.

:func:`get` answers with the final status (and the body when asked), or
refuses: ``CASE_INVALID`` for a URL or host the task does not allow
(loopback by default; ``localhost`` must resolve to loopback),
``GRADER_TIMEOUT``, ``SERVICE_UNREACHABLE``; a server's bad answer, a
redirect elsewhere or a body over ``max_body`` is the run's failure.
Redirects as ``urllib`` follows them, at most :data:`MAX_REDIRECTS`; no
proxy, no cookie. docs/criteria.md gives the HTTP options and the rules.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from ..codes import Ungradable
from .codes import SERVICE_UNREACHABLE
from .kind import Failure

__all__ = ["DEFAULT_HOSTS", "MAX_REDIRECTS", "HttpResponse", "get"]

#: The hosts a criterion may ask when the task names none: loopback.
DEFAULT_HOSTS = ("localhost", "127.0.0.1", "::1")
#: The most redirects followed (urllib's own limit).
MAX_REDIRECTS = 10
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CHUNK = 1 << 16


@dataclass(frozen=True)
class HttpResponse:
    """The final response: its status, and its body when it was read."""

    status: int
    body: bytes
    url: str


def _host(url: str, allowed: frozenset[str]) -> tuple[str, str, int]:
    """``(scheme, host, port)`` of ``url``; ``CASE_INVALID`` when it is not
    an HTTP URL to an allowed host."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise Ungradable("CASE_INVALID", f"url {url!r}: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise Ungradable("CASE_INVALID", f"url {url!r}: an http:// or https:// URL with a host")
    host = parts.hostname.lower()
    if host not in allowed:
        raise Ungradable(
            "CASE_INVALID",
            f"url {url!r}: the task does not name the host {host!r} (allowed_hosts: "
            f"{', '.join(sorted(allowed))})",
        )
    return parts.scheme, host, port or (443 if parts.scheme == "https" else 80)


def _loopback_only(host: str, port: int) -> None:
    """``localhost`` must resolve to loopback addresses only."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise Ungradable(SERVICE_UNREACHABLE, f"{host} does not resolve: {error}") from None
    addresses = {str(info[4][0]) for info in found}
    outside = [a for a in addresses if not ipaddress.ip_address(a.split("%")[0]).is_loopback]
    if outside:
        raise Ungradable(
            SERVICE_UNREACHABLE,
            f"{host} resolves to {', '.join(sorted(outside))}, not loopback: not asked",
        )


def _cut(connection: http.client.HTTPConnection, fired: threading.Event) -> None:
    """The watchdog: at the deadline, shut the connection's socket, so that a
    read blocked on a server that sends a byte at a time returns."""
    fired.set()
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _once(
    url: str,
    allowed: frozenset[str],
    deadline: float,
    read_body: bool,
    max_body: int,
    fired: threading.Event,
) -> tuple[int, str | None, bytes]:
    scheme, host, port = _host(url, allowed)
    if host == "localhost":
        _loopback_only(host, port)
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    parts = urlsplit(url)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    connection: http.client.HTTPConnection
    if scheme == "https":
        connection = http.client.HTTPSConnection(
            host, port, timeout=left, context=ssl.create_default_context()
        )
    else:
        connection = http.client.HTTPConnection(host, port, timeout=left)
    # Each socket operation has its own timeout; the watchdog bounds them together.
    watchdog = threading.Timer(left, _cut, args=(connection, fired))
    watchdog.daemon = True
    watchdog.start()
    try:
        connection.request("GET", target, headers={"Connection": "close"})
        response = connection.getresponse()
        location = response.getheader("Location")
        body = bytearray()
        if read_body:
            while chunk := response.read1(_CHUNK):
                body += chunk
                if len(body) > max_body:
                    raise Failure(f"GET {url}: the body is larger than {max_body} bytes")
        if fired.is_set():
            raise TimeoutError
        return response.status, location, bytes(body)
    finally:
        watchdog.cancel()
        connection.close()


def _unreachable(url: str, error: OSError) -> Ungradable:
    """``SERVICE_UNREACHABLE`` for ``error``, met asking ``url``."""
    if isinstance(error, ssl.SSLError):
        return Ungradable(SERVICE_UNREACHABLE, f"GET {url}: TLS failed: {error}")
    return Ungradable(SERVICE_UNREACHABLE, f"GET {url}: {error.strerror or error}")


def get(
    url: str,
    *,
    allowed_hosts: Iterable[str],
    timeout: float,
    read_body: bool,
    max_body: int,
    follow_redirects: bool = True,
) -> HttpResponse:
    """GET ``url`` (module docstring)."""
    allowed = frozenset(host.lower() for host in allowed_hosts)
    deadline = time.monotonic() + timeout
    fired = threading.Event()
    out_of_time = f"no answer within {timeout:g} s"
    current = url
    try:
        for _ in range(MAX_REDIRECTS + 1):
            status, location, body = _once(current, allowed, deadline, read_body, max_body, fired)
            if not (follow_redirects and status in _REDIRECTS and location):
                return HttpResponse(status=status, body=body, url=current)
            following = urljoin(current, location)
            try:
                _host(following, allowed)
            except Ungradable:
                raise Failure(
                    f"GET {current}: redirected to {following!r}, a host the task does not name"
                ) from None
            current = following
        raise Failure(f"GET {url}: more than {MAX_REDIRECTS} redirects")
    except (http.client.HTTPException, OSError) as error:
        # Out of time: a timeout (TimeoutError is an OSError), or the watchdog
        # cut the exchange, whatever broke then.
        if isinstance(error, TimeoutError) or fired.is_set():
            raise Ungradable("GRADER_TIMEOUT", f"GET {current}: {out_of_time}") from None
        if isinstance(error, OSError):
            raise _unreachable(current, error) from None
        raise Failure(
            f"GET {current}: the answer is not HTTP ({type(error).__name__}: {error})"
        ) from None
