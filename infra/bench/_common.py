"""Helpers shared by the benchmark scripts: alternating timing and installing
reference packages into a directory of their own."""

from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".bench"


def install_target(spec: str) -> Path:
    """``pip install --no-deps --target`` ``spec`` into .bench/ once; returns the dir."""
    target = CACHE / spec.replace("==", "-")
    if not target.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                "--disable-pip-version-check",
                "--target",
                str(target),
                spec,
            ],
            check=True,
        )
    return target


def load_as(package_dir: Path, name: str) -> ModuleType:
    """Import the package in ``package_dir`` under another top-level ``name``,
    so that two versions of one package can run in one process."""
    spec = importlib.util.spec_from_file_location(
        name, package_dir / "__init__.py", submodule_search_locations=[str(package_dir)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def alternate(
    ours: Callable[[], object], theirs: Callable[[], object], *, number: int, rounds: int
) -> tuple[list[float], list[float]]:
    """Time ``number`` calls of each, alternating, ``rounds`` times; per-call
    seconds for each round."""
    mine: list[float] = []
    other: list[float] = []
    for _ in range(rounds):
        for fn, out in ((ours, mine), (theirs, other)):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            out.append((time.perf_counter() - start) / number)
    return mine, other


def ratio_line(
    label: str, mine: list[float], other: list[float], unit: float = 1e6, unit_name: str = "us"
) -> float:
    """Print medians and the throughput ratio (theirs / ours per call); return it."""
    ours_median, theirs_median = statistics.median(mine), statistics.median(other)
    ratio = theirs_median / ours_median
    pairs = sorted(o / m for m, o in zip(mine, other, strict=True))
    print(
        f"{label}: ours {ours_median * unit:.1f} {unit_name}/call, baseline "
        f"{theirs_median * unit:.1f} {unit_name}/call, throughput ratio {ratio:.2f} "
        f"(per-round ratios {pairs[0]:.2f}..{pairs[-1]:.2f})"
    )
    return ratio
