"""Installing the real reference packages the tests compare against, each
into a directory of its own (``pip install --no-deps --target``) or a venv
of its own (:func:`make_venv`, for those that need another Python), so that
they never mix with the project's environment."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

#: The project venv's uv (infra/venv.sh installs it at its locked version).
UV = Path(sys.executable).with_name("uv")


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


def run_or_raise(argv: list[str], what: str, error: type[Exception], timeout: float) -> None:
    """Run ``argv``; when it fails, raise ``error`` saying ``what`` failed,
    with the command and its output."""
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise error(
            f"{what} failed (exit {done.returncode}): {' '.join(argv)}\n"
            f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
        )


def make_venv(
    venv: Path,
    python: str,
    requirements: Sequence[str],
    *,
    error: type[Exception],
    timeout: float,
) -> None:
    """A new venv at ``venv`` made with ``python``, ``requirements`` installed
    into it, or ``error`` with the installer's output. uv (the project venv's)
    when there is one: it installs in parallel and compiles the bytecode, which
    a session with ``PYTHONDONTWRITEBYTECODE=1`` would otherwise compile again
    in every process. Else ``python -m venv`` and pip."""
    what = f"installing {' '.join(requirements)} with {python}"
    if UV.exists():
        run_or_raise(
            [str(UV), "venv", "--quiet", "--python", python, str(venv)], what, error, timeout
        )
        run_or_raise(
            [
                str(UV),
                "pip",
                "install",
                "--quiet",
                "--compile-bytecode",
                "--python",
                str(venv / "bin" / "python"),
                *requirements,
            ],
            what,
            error,
            timeout,
        )
        return
    run_or_raise([python, "-m", "venv", str(venv)], what, error, timeout)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check"]
    run_or_raise([*pip, "--no-input", *requirements], what, error, timeout)
