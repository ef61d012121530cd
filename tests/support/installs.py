"""Installing the real reference packages the tests compare against, each
into a directory of its own (``pip install --no-deps --target``), so that
they never mix with the project's environment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def install_target(spec: str, target: Path) -> Path:
    """``pip install --no-deps --target target spec``; fails loudly (an
    AssertionError with pip's message) when pip cannot."""
    done = subprocess.run(
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
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"could not install {spec}: {done.stderr}"
    return target
