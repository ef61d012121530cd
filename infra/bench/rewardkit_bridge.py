"""The rewardkit bridge against rewardkit's own command line, and weighing
schemes against gated-binary, measured alternately in one process.

    .venv/bin/python infra/bench/rewardkit_bridge.py [--quick]

The bridge's side: ``truereward.read("rewardkit", ...)`` over a task with two
dimensions, a nested group, weights and three named rewards (the layout of
``tests/readers/test_rewardkit_bridge.py``), which starts rewardkit 0.2.3 in its
Python 3.12 venv (``tests/support/rewardkit.py``) through the probe, reads its
files and folds the rows. The baseline: ``rewardkit TESTS --workspace APP
--output OUT/reward.json`` in the same venv, what a task's ``test.sh`` runs.
Both are wall time (each is mostly a process importing litellm). The ratio
is the baseline's time over the bridge's (< 1: the bridge costs more).

Then the fold of a 20-case run into a grade document under
``weighted-mean/1`` with weights (a scoring in the document, version 4)
against ``gated-binary/1`` without, CPU time: what weighing costs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import alternate, ratio_line

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import truereward as tr
from tests.readers.test_rewardkit_bridge import LAYOUT, PASSING, write
from tests.support.rewardkit import rewardkit_python


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds = 1 if args.quick else 5
    kit = rewardkit_python()
    with tempfile.TemporaryDirectory(prefix="bench-rewardkit-") as scratch:
        root = Path(scratch)
        tests = write(root / "tests", LAYOUT)
        app = write(root / "app", PASSING)
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        spec = {"cases": [], "options": {"python": str(kit), "tests": str(tests)}}

        def bridge() -> None:
            rows = tr.read("rewardkit", str(app), spec)
            assert rows, "the bridge gave no rows"

        def itself() -> None:
            subprocess.run(
                [
                    str(kit.parent / "rewardkit"),
                    str(tests),
                    "--workspace",
                    str(app),
                    "--output",
                    str(root / "out" / "reward.json"),
                ],
                env=env,
                check=True,
                capture_output=True,
            )

        mine, other = alternate(bridge, itself, number=1, rounds=rounds)
        ratio = ratio_line(
            "rewardkit bridge vs rewardkit's CLI", mine, other, unit=1.0, unit_name="s"
        )
        print(f"RATIO rewardkit_bridge {ratio:.2f}")

    cases = [{"id": f"c{i}", "kind": "fail_to_pass", "weight": 1 + i % 3} for i in range(20)]
    rows = [
        {"id": f"c{i}", "kind": "fail_to_pass", "verdict": "pass" if i % 4 else "fail"}
        for i in range(20)
    ]
    weighted = tr.TaskSpec.of({"cases": cases, "scoring": {"scheme": "weighted-mean/1"}})
    plain = tr.TaskSpec.of(
        {"cases": [{k: v for k, v in c.items() if k != "weight"} for c in cases]}
    )
    number = 50 if args.quick else 500
    mine, other = alternate(
        lambda: tr.grade_document(rows, case_set=weighted),
        lambda: tr.grade_document(rows, case_set=plain),
        number=number,
        rounds=3 if args.quick else 7,
        clock=time.process_time,
    )
    ratio = ratio_line("weighted-mean/1 with weights vs gated-binary/1", mine, other)
    print(f"RATIO weighted_fold {ratio:.2f}")


if __name__ == "__main__":
    main()
