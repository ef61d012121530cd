"""An HTTP proxy on loopback that holds every response for a fixed time:
object-store round trips (10 to 50 ms on real S3) in front of moto's server.

Each request is forwarded as it came (its ``Host`` header too, so request
signatures still match) over a fresh upstream connection; the response is
held ``latency`` seconds, then sent back on the client's connection, which
stays open (keep-alive), as an S3 client's connection pool expects. Requests
are counted by method (a listing, a ``GET`` with ``list-type``, as
``LIST``). Two paths belong to the proxy itself (no bucket name
starts with ``_``): ``GET /_proxy/counts`` answers the counts as JSON, with
the seconds from the first request to the last answer since the last reset;
``POST /_proxy/reset`` starts counting again. The counts also say the most
requests it was answering at once.

Run it in a process of its own, so that it never competes with what it
measures for the interpreter lock::

    python -m tests.support.latencyproxy --upstream http://127.0.0.1:5000 --latency-ms 25

It prints ``PORT <number>`` once it listens (``--port 0``: a free port).
:class:`LatencyProxy` starts and stops such a process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "content-length",
    "upgrade",
    "te",
    "trailer",
}


def serve(upstream: str, latency: float, port: int) -> None:
    """Serve until killed (see the module docstring)."""
    from aiohttp import ClientSession, ClientTimeout, TCPConnector, web

    counts: Counter[str] = Counter()
    window: list[float] = []  # when the first request since a reset came, and the last answer
    flight = {"now": 0, "most": 0}  # requests being answered, and the most at once since a reset

    async def proxy(request: web.Request) -> web.StreamResponse:
        if request.path == "/_proxy/counts":
            seconds = window[1] - window[0] if len(window) == 2 else 0.0
            return web.json_response(
                {"methods": dict(counts), "seconds": seconds, "most_in_flight": flight["most"]}
            )
        if request.path == "/_proxy/reset":
            counts.clear()
            window.clear()
            flight["most"] = flight["now"]
            return web.json_response({})
        flight["now"] += 1
        flight["most"] = max(flight["most"], flight["now"])
        try:
            return await forward(request)
        finally:
            flight["now"] -= 1

    async def forward(request: web.Request) -> web.StreamResponse:
        # A listing is a GET of the bucket: counted apart, as LIST.
        listing = request.method == "GET" and "list-type" in request.query
        counts["LIST" if listing else request.method] += 1
        if not window:
            window.append(time.monotonic())
        body = await request.read()
        headers = {key: value for key, value in request.headers.items() if key.lower() not in _HOP}
        session: ClientSession = request.app["session"]
        async with session.request(
            request.method,
            upstream + request.path_qs,
            headers=headers,
            data=body,
            allow_redirects=False,
            auto_decompress=False,
        ) as answer:
            payload = await answer.read()
            status = answer.status
            # A HEAD answer's Content-Length is the object's size: kept.
            dropped = _HOP - {"content-length"} if request.method == "HEAD" else _HOP
            back = [
                (key, value) for key, value in answer.headers.items() if key.lower() not in dropped
            ]
        await asyncio.sleep(latency)
        del window[1:]
        window.append(time.monotonic())
        if request.method == "HEAD":
            response = web.Response(status=status)
            for key, value in back:
                response.headers.add(key, value)
            return response
        response = web.Response(status=status, body=payload)
        for key, value in back:
            response.headers.add(key, value)
        return response

    async def start(app: web.Application) -> None:
        # One connection per request upstream: moto's server closes them.
        app["session"] = ClientSession(
            connector=TCPConnector(limit=0, force_close=True),
            timeout=ClientTimeout(total=120),
            skip_auto_headers=("Content-Type", "User-Agent", "Accept", "Accept-Encoding"),
        )

    async def stop(app: web.Application) -> None:
        await app["session"].close()

    async def main() -> None:
        app = web.Application(client_max_size=1 << 30)
        app.on_startup.append(start)
        app.on_cleanup.append(stop)
        app.router.add_route("*", "/{tail:.*}", proxy)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", port, backlog=1024)
        await site.start()
        bound = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print(f"PORT {bound}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())


class LatencyProxy:
    """A latency proxy in a child process (module docstring)."""

    def __init__(self, upstream: str, latency: float) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.support.latencyproxy",
                "--upstream",
                upstream,
                "--latency-ms",
                str(latency * 1000),
            ],
            cwd=Path(__file__).resolve().parents[2],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("PORT "):
            self.process.kill()
            raise RuntimeError(f"the latency proxy did not start: {line!r}")
        self.url = f"http://127.0.0.1:{int(line.split()[1])}"

    def counts(self) -> dict[str, int]:
        """Requests forwarded since the last reset, by method."""
        return dict(self._stats()["methods"])

    def most_in_flight(self) -> int:
        """The most requests it was answering at once since the last reset."""
        return int(self._stats()["most_in_flight"])

    def seconds(self) -> float:
        """From the first request since the last reset to the last answer."""
        return float(self._stats()["seconds"])

    def _stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}/_proxy/counts", timeout=30) as answer:
            found: dict[str, Any] = json.loads(answer.read())
        return found

    def reset(self) -> None:
        """Set the counts to zero."""
        request = urllib.request.Request(f"{self.url}/_proxy/reset", method="POST", data=b"")
        with urllib.request.urlopen(request, timeout=30):
            pass

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()

    def __enter__(self) -> LatencyProxy:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--latency-ms", type=float, default=25.0)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    serve(args.upstream.rstrip("/"), args.latency_ms / 1000, args.port)
