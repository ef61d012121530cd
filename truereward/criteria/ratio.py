"""The similarity ratio of two texts, as :class:`difflib.SequenceMatcher`
computes it (what rewardkit's ``diff_ratio`` reports), bounded in time.

``SequenceMatcher`` has no time bound, and its cost grows with the cube of
the texts' length on some inputs (texts that differ every few characters
from a large alphabet: docs/criteria.md). So texts longer than
:data:`INLINE_CHARS` are compared in a child process of this interpreter
(the same ``difflib``, so the same ratio to the last bit) that is killed when
``timeout`` runs out (``GRADER_TIMEOUT``: the verifier's bound) and may use
at most :data:`MEMORY_BYTES` of memory (more is ``CASE_NOT_GRADED``, the
grader's).
"""

from __future__ import annotations

import os
import pathlib
import sys
import tempfile
from difflib import SequenceMatcher

from ..codes import Ungradable
from .process import run_program

__all__ = ["INLINE_CHARS", "MEMORY_BYTES", "text_ratio"]

#: Texts up to this many characters each are compared in this process
#: (within a fraction of a second whatever they hold).
INLINE_CHARS = 1000
#: The memory the child comparing longer texts may use.
MEMORY_BYTES = 2 << 30

_CHILD = """\
import sys
from difflib import SequenceMatcher
try:
    import resource
    resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))
except (ImportError, ValueError, OSError):
    pass
try:
    with open(sys.argv[1], encoding="utf-8", newline="") as a, \\
            open(sys.argv[2], encoding="utf-8", newline="") as b:
        ratio = SequenceMatcher(None, a.read(), b.read()).ratio()
except MemoryError:
    sys.exit(3)
print(repr(ratio))
"""


def text_ratio(first: str, second: str, *, timeout: float) -> float:
    """``SequenceMatcher(None, first, second).ratio()`` (module docstring)."""
    if max(len(first), len(second)) <= INLINE_CHARS:
        return SequenceMatcher(None, first, second).ratio()
    with tempfile.TemporaryDirectory(prefix="truereward-ratio-") as scratch:
        paths = [os.path.join(scratch, name) for name in ("first", "second")]
        for path, text in zip(paths, (first, second), strict=True):
            pathlib.Path(path).write_text(text, encoding="utf-8", newline="")
        ran = run_program(
            [sys.executable, "-I", "-S", "-c", _CHILD.format(memory=MEMORY_BYTES), *paths],
            cwd=scratch,
            timeout=timeout,
            max_output=1024,
        )
    if ran.ended == "timeout":
        raise Ungradable("GRADER_TIMEOUT", f"the diff ratio was not computed within {timeout:g} s")
    if ran.returncode == 3:
        raise Ungradable(
            "CASE_NOT_GRADED", f"the diff ratio ran out of its {MEMORY_BYTES} bytes of memory"
        )
    if ran.ended != "finished" or ran.returncode != 0:
        raise RuntimeError(
            f"the diff ratio's process ended {ran.ended} with status {ran.returncode}: "
            f"{ran.stderr[-500:].decode('utf-8', errors='replace')}"
        )
    return float(ran.stdout.decode("ascii").strip())
