"""A small fault-injecting HTTP proxy on loopback, for putting between s3fs
and moto's S3 server.

Every request is forwarded to the upstream server over a fresh connection;
the client connection is closed after each response (``Connection:
close``). Faults are scheduled per request number (1-based, counted over the
proxy's life since the last :meth:`FaultProxy.reset`):

- ``reset``: the client connection is closed before the request is forwarded;
- ``503``: a ``503 SlowDown`` response, the request is not forwarded;
- ``slow``: the response is delayed by ``delay`` seconds;
- ``cut``: the request is forwarded (the server acts on it), then the client
  connection is closed without the response.

An **outage** answers ``503 SlowDown`` to every request whose path
contains a given text, for as long as it is set (:meth:`FaultProxy.outage`),
whatever the schedule: the store is down for part of a bucket.

A **late write** (:meth:`FaultProxy.hold`) takes the ``PUT`` requests whose
path contains a given text, drops the client's connection at once (the
client gives up on them) and keeps them; :meth:`FaultProxy.release` sends
them to the server later, which applies them: a delayed request that lands
after newer writes.

A **judge** (:attr:`FaultProxy.judge`), when set, is asked about every
request before it is acted on, with its number, method and path, and may
answer a fault for it: a test can look at the store at that point (every
state a client's requests leave it in is seen there), kill the client
(``kill -9`` of a publishing process at any request, the request then
dropped with ``reset`` or applied with ``cut``), or refuse one write for as
long as it is retried. :meth:`FaultProxy.wait_idle` waits until every
request taken has been answered or dropped.

It also counts requests by method, for request-count benchmarks.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

FAULTS = ("reset", "503", "slow", "cut")


def _read_until(sock: socket.socket, marker: bytes, buffer: bytearray) -> bytes:
    while marker not in buffer:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("peer closed")
        buffer += chunk
    index = buffer.index(marker) + len(marker)
    head = bytes(buffer[:index])
    del buffer[:index]
    return head


def _read_exact(sock: socket.socket, size: int, buffer: bytearray) -> bytes:
    while len(buffer) < size:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("peer closed")
        buffer += chunk
    data = bytes(buffer[:size])
    del buffer[:size]
    return data


def _read_message(
    sock: socket.socket, buffer: bytearray, *, bodiless: bool = False
) -> tuple[bytes, dict[str, str], bytes]:
    """One HTTP message: the head, its headers (lower-case names) and body
    (none when ``bodiless``: the response to a HEAD request). A request that
    expects ``100 Continue`` gets it before its body is read."""
    head = _read_until(sock, b"\r\n\r\n", buffer)
    lines = head.decode("latin-1").split("\r\n")
    if any(line.lower().replace(" ", "") == "expect:100-continue" for line in lines):
        sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    body = b""
    status = lines[0].split(" ")
    if bodiless or (len(status) > 1 and status[1] in ("204", "304")):
        return head, headers, body
    if headers.get("transfer-encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size_line = _read_until(sock, b"\r\n", buffer)
            size = int(size_line.split(b";")[0].strip(), 16)
            chunk = _read_exact(sock, size + 2, buffer)
            chunks.append(size_line + chunk)
            if size == 0:
                # trailers until an empty line
                while True:
                    trailer = _read_until(sock, b"\r\n", buffer)
                    chunks.append(trailer)
                    if trailer == b"\r\n":
                        break
                break
        body = b"".join(chunks)
    elif "content-length" in headers:
        body = _read_exact(sock, int(headers["content-length"]), buffer)
    return head, headers, body


def _without_header(head: bytes, name: str) -> bytes:
    lines = head.split(b"\r\n")
    kept = [line for line in lines if not line.lower().startswith(name.lower().encode() + b":")]
    return b"\r\n".join(kept)


def _with_connection_close(head: bytes) -> bytes:
    head = _without_header(head, "connection")
    return head[:-4] + b"\r\nConnection: close\r\n\r\n"


@dataclass
class FaultProxy:
    """A proxy to ``upstream`` (host, port) listening on 127.0.0.1."""

    upstream: tuple[str, int]
    delay: float = 2.0
    faults: dict[int, str] = field(default_factory=dict)
    seen: int = 0
    methods: Counter[str] = field(default_factory=Counter)
    injected: list[tuple[int, str, str]] = field(default_factory=list)
    #: Paths containing this text get 503 while it is set (None: no outage).
    down: str | None = None
    refused: int = 0
    #: PUTs whose path contains this text are held (None: none).
    holding: str | None = None
    held: list[bytes] = field(default_factory=list)
    #: Asked (number, method, path) before each request is acted on; its
    #: answer, a fault or None, replaces the scheduled one.
    judge: Callable[[int, str, str], str | None] | None = None
    #: Requests taken and not yet answered or dropped.
    active: int = 0

    def __post_init__(self) -> None:
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._lock = threading.Lock()
        self._running = True
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reset(self, faults: dict[int, str] | None = None) -> None:
        """Start counting again, with a new fault schedule."""
        with self._lock:
            self.seen = 0
            self.methods = Counter()
            self.faults = dict(faults or {})
            self.injected = []

    def outage(self, path_part: str | None) -> None:
        """Answer 503 to every request whose path contains ``path_part``
        (``None`` ends the outage)."""
        with self._lock:
            self.down = path_part

    def hold(self, path_part: str | None) -> None:
        """Hold every PUT whose path contains ``path_part`` (``None``: stop)."""
        with self._lock:
            self.holding = path_part

    def release(self) -> int:
        """Send the held requests to the server, in the order they came;
        returns how many."""
        with self._lock:
            held, self.held = self.held, []
        for request in held:
            with socket.create_connection(self.upstream) as server:
                server.sendall(request)
                _read_message(server, bytearray())
        return len(held)

    def wait_idle(self, timeout: float = 30.0) -> None:
        """Return once no request is in hand (answered, dropped or sent on)."""
        deadline = time.monotonic() + timeout
        while self.active:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the proxy still has {self.active} request(s) in hand")
            time.sleep(0.005)

    def close(self) -> None:
        self._running = False
        self._server.close()

    def _serve(self) -> None:
        while self._running:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _handle(self, client: socket.socket) -> None:
        with self._lock:
            self.active += 1
        try:
            self._answer(client)
        finally:
            with self._lock:
                self.active -= 1

    def _answer(self, client: socket.socket) -> None:
        buffer = bytearray()
        try:
            with client:
                head, _, body = _read_message(client, buffer)
                head = _without_header(head, "expect")
                method, path = head.split(b" ", 2)[:2]
                method = method.decode()
                with self._lock:
                    self.seen += 1
                    number = self.seen
                    self.methods[method] += 1
                    fault = self.faults.get(number)
                    if fault:
                        self.injected.append((number, method, fault))
                    if self.down is not None and self.down in path.decode("latin-1"):
                        fault = "503"
                        self.refused += 1
                    if (
                        self.holding is not None
                        and method == "PUT"
                        and self.holding in path.decode("latin-1")
                    ):
                        self.held.append(_with_connection_close(head) + body)
                        fault = "held"
                    judge = self.judge
                if judge is not None and fault != "held":
                    fault = judge(number, method, path.decode("latin-1")) or fault
                if fault == "held":
                    client.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                    )
                    return
                if fault == "reset":
                    client.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                    )
                    return
                if fault == "503":
                    message = (
                        b"<Error><Code>SlowDown</Code><Message>Please reduce your "
                        b"request rate.</Message></Error>"
                    )
                    client.sendall(
                        b"HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\n"
                        b"Content-Length: "
                        + str(len(message)).encode()
                        + b"\r\nConnection: close\r\n\r\n"
                        + (b"" if method == "HEAD" else message)  # a HEAD answer has no body
                    )
                    return
                with socket.create_connection(self.upstream) as server:
                    server.sendall(_with_connection_close(head) + body)
                    upstream_buffer = bytearray()
                    response_head, _, response_body = _read_message(
                        server, upstream_buffer, bodiless=method == "HEAD"
                    )
                if fault == "cut":
                    client.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                    )
                    return
                if fault == "slow":
                    time.sleep(self.delay)
                client.sendall(_with_connection_close(response_head) + response_body)
        except (ConnectionError, OSError, ValueError):
            return
