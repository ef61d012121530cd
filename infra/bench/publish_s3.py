"""Publishing to S3 (moto's server on loopback): requests per publish, and
throughput against raw boto3 put_object of the same four bodies.

    .venv/bin/python infra/bench/publish_s3.py [--quick] [--runs 500] [--threads 8]

1. Requests on the wire (counted by a proxy between s3fs and moto, by HTTP
   method) for a fresh gradable run, a republish of the same grade (each
   listing the prefix itself, and handed the listing a sweep's planning
   found), a fresh ungradable run and a fresh run over reward objects left
   without a grade. Target: a fresh gradable run handed its listing costs
   at most 5.
2. Publishing RUNS runs with THREADS threads through truereward.publish
   (listing each prefix itself, and handed the listing), against the same
   bodies written with boto3 ``put_object`` (four PUTs per run, no checks),
   alternating, each side on fresh keys. Target: ours handed the listing /
   raw time <= 1.5.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import truereward  # noqa: E402
from tests.support import s3server  # noqa: E402
from tests.support.faultproxy import FaultProxy  # noqa: E402
from truereward.grade.files import render  # noqa: E402


def documents(count: int) -> list[truereward.GradeDocument]:
    return [
        truereward.grade_document(
            [
                {
                    "id": f"tests/test_m.py::test_{i}",
                    "kind": "fail_to_pass" if i < 5 else "pass_to_pass",
                    "verdict": "fail" if (i + run) % 7 == 0 else "pass",
                    "duration_s": 0.01,
                }
                for i in range(20)
            ],
            run={"id": f"run-{run}"},
        )
        for run in range(count)
    ]


def options(endpoint: str) -> dict[str, Any]:
    return {
        "key": "testing",
        "secret": "testing",
        "endpoint_url": endpoint,
        "client_kwargs": {"region_name": "us-east-1"},
    }


def count_requests(proxy: FaultProxy, client: Any, bucket: str) -> None:
    """Requests by method for each kind of publish; "handed a listing": the
    run's objects as a sweep's planning lists them, passed to publish."""
    document, listed = documents(2)
    ungradable = truereward.grade_document([])
    for name, data in [("reward.txt", b"1.0\n"), ("reward.json", b'{"reward": 1.0}')]:
        client.put_object(Bucket=bucket, Key=f"count/orphans/{name}", Body=data)
    cases = [
        ("fresh gradable run", document, "count/fresh", False),
        ("fresh gradable run, handed a listing", listed, "count/listed", True),
        ("republish of the same grade", document, "count/fresh", False),
        ("republish of the same grade, handed a listing", listed, "count/listed", True),
        ("fresh ungradable run", ungradable, "count/ungradable", False),
        (
            "fresh gradable run over reward objects left without a grade",
            document,
            "count/orphans",
            False,
        ),
    ]
    seen = {}
    for label, grade, prefix, handed in cases:
        listing = None
        if handed:
            answer = client.list_objects_v2(Bucket=bucket, Prefix=f"{prefix}/")
            listing = {
                item["Key"].rsplit("/", 1)[1]: item["ETag"] for item in answer.get("Contents", [])
            }
        proxy.reset()
        truereward.publish(
            grade,
            f"s3://{bucket}/{prefix}",
            storage_options=options(proxy.endpoint),
            listing=listing,
        )
        methods = dict(sorted(proxy.methods.items()))
        print(f"requests for a {label}: {proxy.seen} {methods}")
        seen[label] = proxy.seen
    print(
        "RATIO publish_s3 fresh_gradable_requests="
        f"{seen['fresh gradable run, handed a listing']} (handed a listing; target <= 5), "
        f"{seen['fresh gradable run']} (listing its own)"
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    runs, rounds = (40, 1) if args.quick else (args.runs, 3)

    # moto runs in a process of its own, as a remote store would: its CPU
    # time is not charged to the clients being compared.
    server, endpoint = s3server.start_process()
    host, port = endpoint.removeprefix("http://").split(":")
    client = s3server.client(endpoint)
    client.create_bucket(Bucket="bench")
    proxy = FaultProxy(upstream=(host, int(port)))
    try:
        count_requests(proxy, client, "bench")
        grades = documents(runs)
        bodies = [render(grade) for grade in grades]
        store_options = options(endpoint)
        clients = [s3server.client(endpoint) for _ in range(args.threads)]

        def ours(round_index: int, listing: dict[str, str] | None = None) -> float:
            """Ours; ``listing={}``: each run handed the (empty) listing a
            sweep's planning found, as the flow does, instead of listing."""
            side = "ours" if listing is None else "listed"
            start = time.perf_counter()
            with ThreadPoolExecutor(args.threads) as pool:
                list(
                    pool.map(
                        lambda i: truereward.publish(
                            grades[i],
                            f"s3://bench/{side}-{round_index}/run-{i}",
                            storage_options=store_options,
                            listing=listing,
                        ),
                        range(runs),
                    )
                )
            return time.perf_counter() - start

        def raw(round_index: int) -> float:
            def put(i: int) -> None:
                s3 = clients[i % args.threads]
                for name, data in bodies[i].items():
                    s3.put_object(
                        Bucket="bench", Key=f"raw-{round_index}/run-{i}/{name}", Body=data
                    )

            start = time.perf_counter()
            with ThreadPoolExecutor(args.threads) as pool:
                list(pool.map(put, range(runs)))
            return time.perf_counter() - start

        ours(-1)  # warm both paths (clients, connection pools) before timing
        raw(-1)
        mine, handed, theirs = [], [], []
        for round_index in range(rounds):
            mine.append(ours(round_index))
            handed.append(ours(round_index, {}))
            theirs.append(raw(round_index))
        ratio = statistics.median(mine) / statistics.median(theirs)
        ratio_handed = statistics.median(handed) / statistics.median(theirs)
        print(
            f"{runs} runs, {args.threads} threads, {rounds} alternating rounds: "
            f"truereward.publish {statistics.median(mine):.2f} s "
            f"({runs / statistics.median(mine):.0f} runs/s), handed a listing "
            f"{statistics.median(handed):.2f} s, raw put_object "
            f"{statistics.median(theirs):.2f} s"
        )
        print(
            f"RATIO publish_s3 time={ratio_handed:.2f} (ours handed a listing/raw; "
            f"target <= 1.5), {ratio:.2f} (listing its own)"
        )
    finally:
        proxy.close()
        server.terminate()
        server.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
