"""Time of ``python -c "import truereward"`` against ``python -c pass`` in
the same run (fresh interpreters, alternating).

    .venv/bin/python infra/bench/import_time.py [--quick]

Target: the import itself (the difference) well under 0.25 s, the whole
command under 0.25 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def timed(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds = 5 if args.quick else 30
    ours, bare = [], []
    for _ in range(rounds):
        ours.append(timed("import truereward"))
        bare.append(timed("pass"))
    ours_median, bare_median = statistics.median(ours), statistics.median(bare)
    print(
        f"python -c 'import truereward': {ours_median * 1e3:.1f} ms (median of {rounds}); "
        f"python -c pass: {bare_median * 1e3:.1f} ms"
    )
    print(
        f"RATIO import_time whole={ours_median:.3f}s import={ours_median - bare_median:.3f}s "
        f"ratio={ours_median / bare_median:.2f} (target: whole < 0.25 s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
