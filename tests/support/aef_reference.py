"""ai-eval-forge 0.2.0, the reference for ``truereward checks``, run for real.

The published package is installed with ``pip install --target`` into a
directory of its own and run in a separate process that answers JSON-line
requests (score a suite, score one case); its command line is run the same
way. If it cannot be installed, the tests that need it fail loudly.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from tests.support.installs import install_target

VERSION = "0.2.0"

SERVER = textwrap.dedent("""
    import json, sys
    import ai_eval_forge
    from ai_eval_forge import evaluate_case, evaluate_suite
    assert ai_eval_forge.__version__ == "0.2.0", ai_eval_forge.__version__
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request["op"] == "suite":
                out = {"ok": evaluate_suite(request["cases"]).to_dict()}
            else:
                case = evaluate_case(request["case"], request.get("index", 0))
                out = {"ok": case.to_dict()}
        except Exception as error:
            out = {"raises": f"{type(error).__name__}: {error}"}
        print(json.dumps(out), flush=True)
""")


def install(target: Path) -> Path:
    """Install ai-eval-forge 0.2.0 into ``target``; an AssertionError saying
    why when pip cannot."""
    install_target(f"ai-eval-forge=={VERSION}", target)
    assert (target / "ai_eval_forge").is_dir(), f"ai-eval-forge is not in {target}"
    return target


class Reference:
    """A running ai-eval-forge 0.2.0."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", self._prelude() + SERVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _prelude(self) -> str:
        return f"import sys; sys.path.insert(0, {str(self.target)!r})\n"

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, "ai-eval-forge stopped answering"
        answer: dict[str, Any] = json.loads(line)
        return answer

    def suite(self, cases: list[Any]) -> dict[str, Any]:
        """``evaluate_suite(cases).to_dict()``; AssertionError if it raises."""
        answer = self._ask({"op": "suite", "cases": cases})
        assert "ok" in answer, f"ai-eval-forge raised: {answer.get('raises')}"
        result: dict[str, Any] = answer["ok"]
        return result

    def case(self, case: Any, index: int = 0) -> dict[str, Any]:
        """``{"ok": evaluate_case(case).to_dict()}`` or ``{"raises": "..."}``."""
        return self._ask({"op": "case", "case": case, "index": index})

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``ai-eval-forge ARGS``."""
        code = self._prelude() + (
            "from ai_eval_forge.cli import main\nsys.exit(main(sys.argv[1:]))\n"
        )
        return subprocess.run(
            [sys.executable, "-I", "-c", code, *args],
            capture_output=True,
            text=True,
            check=False,
        )

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)
