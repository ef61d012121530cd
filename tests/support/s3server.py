"""moto's S3 app on loopback, as the tests and the benchmarks serve it: the
S3 app alone, not the dispatcher moto puts in front of all its services,
which lists moto's package directory (a ``stat`` a service) on every
request to find the service it is for (docs/install.md, "How long the
suite takes").

- :class:`AtomicMotoServer`: in this process, one request at a time (the
  tests' ``s3_endpoint``);
- :func:`start_process`: in a process of its own, threaded as
  ``moto_server`` is (the benchmarks', whose clients' CPU is measured apart
  from the store's)::

      python -m tests.support.s3server --port 0

  prints ``PORT <number>`` once it listens;
- :func:`client`: a boto3 client of either.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any


def s3_app() -> Any:
    """moto's S3 WSGI app, the only service the tests and benchmarks use;
    path-style requests on loopback reach it as they reach the dispatcher."""
    from moto.moto_server.werkzeug_app import create_backend_app

    return create_backend_app("s3")


def client(endpoint: str) -> Any:
    """A boto3 S3 client of the server at ``endpoint``, with the dummy
    credentials moto takes (for setting a bucket up or looking at it)."""
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )


def _server(app: Any, port: int) -> Any:
    """werkzeug's threaded server on 127.0.0.1 with moto's request handler
    (as ``moto_server`` serves)."""
    import logging

    from moto.moto_server.werkzeug_app import MotoRequestHandler
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line a request
    return make_server("127.0.0.1", port, app, True, request_handler=MotoRequestHandler)


class AtomicMotoServer:
    """moto's S3 app in this process, one request at a time. moto checks
    ``If-None-Match``/``If-Match`` and then writes, with no lock between:
    two conditional PUTs racing in its threads can both pass the check,
    which real S3 never allows (a conditional write is atomic there). Two
    publishers each "won" a race that way under load. Serialising requests
    gives every request S3's atomicity; a request that a test's proxy holds
    is held before it reaches the server, not inside."""

    def __init__(self) -> None:
        app = s3_app()
        lock = threading.Lock()

        def one_at_a_time(environ: dict[str, Any], start_response: Any) -> list[bytes]:
            with lock:
                return list(app(environ, start_response))  # the whole answer inside

        self._server = _server(one_at_a_time, 0)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def start(self) -> str:
        self._thread.start()
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join()


def start_process() -> tuple[subprocess.Popen[str], str]:
    """moto's S3 app in a child process on a free port, requests served
    side by side (a benchmark's clients write disjoint keys, so the lock of
    :class:`AtomicMotoServer` would only cap the store's throughput).
    Returns the process and its endpoint; stop it with ``kill``."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.s3server", "--port", "0"],
        cwd=Path(__file__).resolve().parents[2],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("PORT "):
        process.kill()
        raise RuntimeError(f"moto's S3 server did not start: {line!r}")
    return process, f"http://127.0.0.1:{int(line.split()[1])}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    args = parser.parse_args(argv)
    server = _server(s3_app(), args.port)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
