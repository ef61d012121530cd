"""Durable local publish of the four files: truereward.publish against a
minimal hand-written durable writer, measured alternately in one run.

    .venv/bin/python infra/bench/publish_local.py [--quick] [--dir DIR]

The baseline writes the same four bodies the way a careful person would by
hand: for each file a temporary file in the target directory, write, fsync,
rename, fsync of the directory. truereward.publish does all that plus
rendering the bodies, the directory lock, reading back what is there, the
conflict check and create-if-absent. Each iteration publishes into a fresh,
already existing directory. Target: ratio (ours / baseline time) <= 1.3.

Both wall time and CPU time (``time.process_time``: user + system, which is
what the two sides spend themselves) are reported; on a disk the wall time
is mostly fsync waits, which favour whoever fsyncs less (the baseline
fsyncs the directory once per file, truereward twice per publish), and on a
shared, loaded machine the CPU ratio is the steadier figure. ``--dir`` on a
tmpfs (``/dev/shm``), where fsync is nearly free, measures the work itself.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import truereward
from truereward.grade.files import render


def minimal_durable_writer(directory: Path, bodies: dict[str, bytes]) -> None:
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name, data in bodies.items():
            fd, temp = tempfile.mkstemp(dir=directory, prefix=f".{name}.")
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.rename(temp, directory / name)
            os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--dir", help="where to write (default: a temp dir under .bench/)")
    args = parser.parse_args()
    rows = [
        {
            "id": f"tests/test_m.py::test_{i}",
            "kind": "fail_to_pass" if i < 5 else "pass_to_pass",
            "verdict": "pass",
            "duration_s": 0.01,
        }
        for i in range(20)
    ]
    document = truereward.grade_document(rows)
    bodies = render(document)
    base = Path(args.dir or Path(__file__).resolve().parents[2] / ".bench" / "publish")
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    rounds, number = (3, 10) if args.quick else (15, 40)
    ours: list[float] = []
    theirs: list[float] = []
    ours_cpu: list[float] = []
    theirs_cpu: list[float] = []
    counter = 0
    for _ in range(rounds):
        for label, out, cpu in (("ours", ours, ours_cpu), ("baseline", theirs, theirs_cpu)):
            targets = []
            for _ in range(number):
                counter += 1
                target = base / f"{label}-{counter}"
                target.mkdir()
                targets.append(target)
            start, start_cpu = time.perf_counter(), time.process_time()
            for target in targets:
                if label == "ours":
                    truereward.publish(document, target)
                else:
                    minimal_durable_writer(target, bodies)
            out.append((time.perf_counter() - start) / number)
            cpu.append((time.process_time() - start_cpu) / number)
    shutil.rmtree(base, ignore_errors=True)
    ours_median, theirs_median = statistics.median(ours), statistics.median(theirs)
    ours_cpu_median, theirs_cpu_median = statistics.median(ours_cpu), statistics.median(theirs_cpu)
    ratio = ours_median / theirs_median
    cpu_ratio = ours_cpu_median / theirs_cpu_median
    print(f"four files, {rounds} alternating rounds of {number} publishes into {base.parent}")
    print(
        f"truereward.publish: {ours_median * 1e3:.3f} ms wall, {ours_cpu_median * 1e3:.3f} ms CPU; "
        f"minimal durable writer: {theirs_median * 1e3:.3f} ms wall, "
        f"{theirs_cpu_median * 1e3:.3f} ms CPU"
    )
    print(
        f"RATIO publish_local cost={ratio:.2f} cpu={cpu_ratio:.2f} (ours/baseline; target <= 1.3)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
