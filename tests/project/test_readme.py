"""Every fenced block of README.md runs as written, and says what it claims.

Each block is known by the heading it sits under and its place there, and
:data:`PLANS` says how it is run: ``bash -e`` in a scratch copy of the clone
(or in the clone itself, where the block uses ``./.venv`` and the scripts that
install into it), with the project's ``.venv/bin`` first on ``PATH``; Python
blocks in this process, statement by statement, in a scratch copy. The table
lists every substitution made in a block and every variable added to its
environment, each with its reason; a substitution that no longer finds its
text fails the test. A block without a plan fails the test, so a new block
cannot go untested, and a plan without its block fails too.

A Python statement followed by a comment holding a literal (``expr  # (True,
1.0)``, or the literal on the next line, optionally followed by ``: words``)
is a claim: the statement's value must have that literal's repr.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.support.doc_blocks import (
    VENV_BIN,
    Block,
    Env,
    Plan,
    Ran,
    Sub,
    block_env,
    readme_blocks,
    run_bash,
    scratch_copy,
    substituted,
)
from tests.support.server import free_port
from tests.support.sweeps import published
from truereward.schemas import load

README = ROOT / "README.md"


# --- how each block is run --------------------------------------------------------------------


def check_two_commands(ran: Ran) -> None:
    runs = published(ran.tmp / "demo")
    assert len(runs) == 30 and all(item["grade"] for item in runs.values())
    assert sum(item["grade"]["gradable"] for item in runs.values()) == 23
    assert f"published under {ran.tmp}/demo/" in ran.output and "; verified" in ran.output
    assert f"sweep report: {ran.tmp}/demo/sweep-report.html" in ran.output  # where to look
    # "N tests collected", or "N/M tests collected (K deselected)": the benchmarks wait for -m bench
    assert re.search(r"^\d+(/\d+)? tests collected", ran.output, re.M), ran.output[-2000:]


def check_python_tour(ran: Ran) -> None:
    assert "out/run-0042: another grade (" in ran.output  # the conflict was raised and caught
    grade = json.loads((ran.cwd / "out" / "run-0042" / "grade.json").read_text())
    assert grade["refusals"][0]["code"] == "CASE_NOT_GRADED"
    assert not (ran.cwd / "out" / "run-0042" / "reward.txt").exists()  # the replacement refuses


def check_shell_tour(ran: Ran) -> None:
    grade = json.loads((ran.cwd / "out" / "tour" / "grade.json").read_text())
    assert grade["gradable"] and grade["reward"] == 1.0 and grade["cases"]["total"] == 4
    assert "out/tour: consistent" in ran.output
    assert "RUN_NOT_DETERMINISTIC" in ran.output  # truereward codes
    assert f'"title": "{load("grade")["title"]}"' in ran.output  # truereward schema grade


def check_junit_grade(ran: Ran) -> None:
    grade = json.loads((ran.cwd / "out" / "junit" / "grade.json").read_text())
    assert grade["reward"] == 1.0 and grade["cases"]["passed"] == 4
    assert [item["path"] for item in grade["evidence"]] == [
        "samples/runs/test-reports/logs/junit.xml"
    ]


def check_verifier_module(ran: Ran) -> None:
    shipped = ROOT / "samples" / "verifier" / "test_grade.py"
    assert ran.block.text == shipped.read_text(), "the README shows samples/verifier/test_grade.py"
    compile(ran.block.text, str(shipped), "exec")


def check_verifier_run(ran: Ran) -> None:
    logs = ran.cwd / "out" / "verifier"
    grade = json.loads((logs / "grade.json").read_text())
    assert grade["gradable"] and grade["reward"] == 1.0
    assert [(row["id"], row["verdict"]) for row in grade["detail"]] == [
        ("total", "pass"),
        ("unit", "pass"),
    ]
    assert (logs / "reward.txt").read_text() == "1.0\n"
    assert "2 passed" in ran.output and "out/verifier: consistent" in ran.output


def check_s3_python(ran: Ran) -> None:
    listed = ran.s3_client.list_objects_v2(Bucket="grades", Prefix="samples/all-pass/")
    names = sorted(item["Key"].rsplit("/", 1)[1] for item in listed["Contents"])
    assert names == ["ctrf.json", "grade.json", "reward.json", "reward.txt"]


def check_s3_shell(ran: Ran) -> None:
    body = ran.s3_client.get_object(Bucket="grades", Key="samples/fix-fails/grade.json")["Body"]
    grade = json.loads(body.read())
    assert grade["gradable"] and grade["reward"] == 0.0  # the fix fails one of its cases


def check_prefect(ran: Ran) -> None:
    assert "Graded with refusals" in ran.output
    runs = published(ran.cwd / "out" / "graded")
    assert len(runs) == 30 and all(item["grade"] for item in runs.values())
    assert sum(item["grade"]["gradable"] for item in runs.values()) == 23
    assert runs["run-28-store-flaky"]["grade"]["run"]["attempt"] == 2


def check_benchmarks(ran: Ran) -> None:
    for script in re.findall(r"infra/bench/(\w+)\.py", ran.block.text):
        assert re.search(rf"^RATIO {script}", ran.output, re.M), f"{script} printed no RATIO"


S3_ENDPOINT = Sub(
    "http://127.0.0.1:9000", "{s3}", 1, "the compose store's port -> moto's server on loopback"
)


def benchmarks_plan(scripts: int) -> Plan:
    """A block of ``scripts`` benchmark commands, run as CI runs them."""
    return Plan(
        "bash",
        "bash",
        where="root",  # the scripts run ./.venv/bin/python and keep their caches in .bench/
        subs=(
            Sub(
                r"(infra/bench/\w+\.py)",
                r"\1 --quick",
                scripts,
                "smoke runs, as CI runs them: the full runs take minutes each",
                regex=True,
            ),
        ),
        check=check_benchmarks,
        slow=True,
        bench=True,
        timeout=900,  # 2 to 4 minutes when the suite's other long tests share the cores
    )


#: How each block is run, by (heading, place under it).
PLANS: dict[tuple[str, int], Plan] = {
    ("truereward", 1): Plan("text", "text"),  # the pipeline's diagram: nothing to run
    ("The two commands", 1): Plan(
        "bash",
        "bash",
        where="root",  # both scripts install into ./.venv and run from the clone's root
        subs=(
            Sub(
                "bash infra/demo.sh",
                "bash infra/demo.sh {tmp}/demo",
                1,
                "the demo's output directory in the temp dir, not out/demo in the clone",
            ),
            Sub(
                "bash infra/test.sh",
                "bash infra/test.sh --collect-only -q",
                1,
                "the suite is running this test: running it again inside would recurse",
            ),
        ),
        env=(
            Env(
                "TRUEREWARD_DEMO_PREFECT_HOME",
                "{tmp}/demo-prefect-home",
                "the demo's Prefect home in the temp dir, not out/.prefect-demo in the clone",
            ),
        ),
        check=check_two_commands,
        slow=True,
        timeout=300,
    ),
    ("A five-minute tour", 1): Plan("python", "python", claims=7, check=check_python_tour),
    ("A five-minute tour", 2): Plan("bash", "bash", check=check_shell_tour),
    ("Readers: evidence in, rows out", 1): Plan("python", "python", claims=2),
    ("Readers: evidence in, rows out", 2): Plan("bash", "bash", check=check_junit_grade),
    # The verifier's module is samples/verifier/test_grade.py, which the next block runs.
    ("The pytest plugin", 1): Plan("python", "module", check=check_verifier_module),
    ("The pytest plugin", 2): Plan("bash", "bash", check=check_verifier_run, slow=True),
    # Defines the subtests test only: tests/plugin/test_plugin.py runs that module in sessions.
    ("The pytest plugin", 3): Plan("python", "python"),
    ("Publishing to object storage", 1): Plan(
        "python", "python", subs=(S3_ENDPOINT,), claims=2, check=check_s3_python, s3=True
    ),
    ("Publishing to object storage", 2): Plan(
        "bash", "bash", subs=(S3_ENDPOINT,), check=check_s3_shell, s3=True
    ),
    ("Grading sweeps with Prefect", 1): Plan(
        "bash",
        "bash",
        subs=(Sub("4200", "{port}", 2, "the server's port -> a free one"),),
        env=(Env("PREFECT_WORKER_QUERY_SECONDS", "1", "the worker polls every 1 s, not 10"),),
        check=check_prefect,
        slow=True,
        timeout=300,
    ),
    ("Benchmarks", 1): benchmarks_plan(11),
    ("Benchmarks", 2): benchmarks_plan(4),
    ("Benchmarks", 3): benchmarks_plan(2),
}


# --- running ----------------------------------------------------------------------------------


def comments_by_line(code: str) -> dict[int, str]:
    found: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = token.string[1:].strip()
    return found


def claimed(comment: str | None) -> tuple[bool, Any]:
    """(True, value) when the comment starts with a literal (``'x': words`` too)."""
    if comment is None:
        return False, None
    for candidate in (comment, comment.split(": ", 1)[0]):
        with contextlib.suppress(ValueError, SyntaxError, TypeError, MemoryError):
            return True, ast.literal_eval(candidate)
    return False, None


def run_python(code: str, namespace: dict[str, Any], offset: int = 0) -> int:
    """Run the block statement by statement; check its claims; how many.
    Line numbers (in tracebacks too) are README.md's: the block starts after
    line ``offset``."""
    lines = code.splitlines()
    comments = comments_by_line(code)
    tree = ast.increment_lineno(ast.parse(code), offset)
    checked = 0
    for statement in tree.body:
        end = (statement.end_lineno or statement.lineno) - offset  # in the block
        comment = comments.get(end)
        if comment is None and end < len(lines) and lines[end].lstrip().startswith("#"):
            comment = comments.get(end + 1)  # the claim on a line of its own
        is_claim, value = claimed(comment)
        if is_claim and isinstance(statement, ast.Expr):
            got = eval(compile(ast.Expression(statement.value), "README.md", "eval"), namespace)
            where = f"README.md:{end + offset}"
            assert repr(got) == repr(value), f"{where}: {got!r}, the README says {value!r}"
            checked += 1
        else:
            module = ast.Module([statement], type_ignores=[])
            exec(compile(module, "README.md", "exec"), namespace)
    return checked


@contextlib.contextmanager
def s3_bucket(request: pytest.FixtureRequest) -> Iterator[tuple[str, Any]]:
    """The loopback S3 endpoint and a client, with the bucket ``grades`` the
    compose stack creates, emptied."""
    endpoint = request.getfixturevalue("s3_endpoint")
    client = request.getfixturevalue("s3_client")
    with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
        client.create_bucket(Bucket="grades")
    for item in client.list_objects_v2(Bucket="grades").get("Contents", []):
        client.delete_object(Bucket="grades", Key=item["Key"])
    yield endpoint, client


def run_block(block: Block, plan: Plan, tmp: Path, request: pytest.FixtureRequest) -> Ran:
    cwd = ROOT if plan.where == "root" else scratch_copy(tmp / "clone")
    ran = Ran(block=block, cwd=cwd, tmp=tmp)
    with contextlib.ExitStack() as stack:
        values = {"tmp": str(tmp), "port": str(free_port()), "s3": ""}
        if plan.s3:
            values["s3"], ran.s3_client = stack.enter_context(s3_bucket(request))
        text = substituted(block.text, plan.subs, values)
        where = f"README.md:{block.line}"
        if plan.how == "bash":
            env = block_env(plan, values)
            ran.output = run_bash(text, cwd, env, tmp / "block.log", plan.timeout)
        elif plan.how == "python":
            out = io.StringIO()
            with contextlib.chdir(cwd), contextlib.redirect_stdout(out):
                checked = run_python(text, ran.namespace, block.line)
            ran.output = out.getvalue()
            assert checked == plan.claims, f"{where}: {checked} claims checked, not {plan.claims}"
        else:
            assert plan.how in ("text", "module"), plan.how
        if plan.check is not None:
            plan.check(ran)
    return ran


# --- the tests --------------------------------------------------------------------------------


def marks(plan: Plan) -> list[Any]:
    """``slow``; ``longest`` for a block allowed minutes (timeout 300 s):
    the suite starts those first, each on a worker of its own; ``bench``
    for the benchmarks' smoke runs (tests/conftest.py)."""
    if not plan.slow:
        return []
    found = [pytest.mark.slow, pytest.mark.longest] if plan.timeout >= 300 else [pytest.mark.slow]
    return [*found, pytest.mark.bench] if plan.bench else found


def test_every_benchmark_script_is_in_a_readme_block() -> None:
    listed = set(re.findall(r"infra/bench/(\w+)\.py", README.read_text()))
    scripts = {path.stem for path in (ROOT / "infra" / "bench").glob("[!_]*.py")}
    assert scripts <= listed, sorted(scripts - listed)


def plan_params() -> list[Any]:
    """Every plan, in the README's order."""
    order = list(PLANS)
    return [
        pytest.param(
            key,
            id=f"{key[0]}-{key[1]}",
            marks=marks(PLANS[key]),
        )
        for key in order
    ]


@pytest.mark.parametrize("key", plan_params())
def test_the_block_runs_as_written(
    key: tuple[str, int], tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    assert VENV_BIN.is_dir(), "the README's install command makes .venv"
    blocks = {block.key: block for block in readme_blocks(README.read_text())}
    assert key in blocks, f"the README has no block {key} any more"
    run_block(blocks[key], PLANS[key], tmp_path, request)


def test_every_block_has_a_plan_and_every_plan_a_block() -> None:
    blocks = readme_blocks(README.read_text())
    unknown = [
        f"README.md:{block.line} {block.key} ({block.language or 'no language'})"
        for block in blocks
        if block.key not in PLANS
    ]
    assert not unknown, f"blocks this test does not know how to run: {unknown}"
    stale = set(PLANS) - {block.key for block in blocks}
    assert not stale, f"plans for blocks the README no longer has: {sorted(stale)}"
    for block in blocks:
        plan = PLANS[block.key]
        assert block.language == plan.language, (block.key, block.language, plan.language)
        assert plan.language in ("bash", "python", "text"), block.key
        assert plan.how != "text" or plan.language == "text", block.key
    assert {plan.how for plan in PLANS.values()} == {"bash", "python", "module", "text"}


def test_the_fences_are_read_as_blocks() -> None:
    text = "# t\n\n```text\na\n```\n\n## S\n\n```bash\nb\n```\n\n```python\nc\n```\n"
    assert [(b.key, b.language, b.text, b.line) for b in readme_blocks(text)] == [
        (("t", 1), "text", "a\n", 3),
        (("S", 1), "bash", "b\n", 9),
        (("S", 2), "python", "c\n", 13),
    ]
    with pytest.raises(AssertionError, match="never closed"):
        readme_blocks("```bash\nls\n")
    with pytest.raises(AssertionError, match="an indented fence"):
        readme_blocks("- a list:\n\n  ```bash\n  ls\n  ```\n")
    with pytest.raises(AssertionError, match="a ~~~ fence"):
        readme_blocks("~~~bash\nls\n~~~\n")


def test_a_claim_that_does_not_hold_fails_and_one_that_holds_is_counted() -> None:
    assert run_python("x = 2\nx + 1   # 3\nx * 2\n# 4\n'a'  # 'a': words\n", {}) == 3
    with pytest.raises(AssertionError, match=re.escape("README.md:12: 3, the README says 5")):
        run_python("x = 2\nx + 1   # 5\n", {}, 10)
    assert run_python("y = 1  # 2: an assignment claims nothing\nprint(y)  # prose\n", {}) == 0


def test_a_substitution_that_no_longer_applies_fails() -> None:
    sub = Sub("4200", "{port}", 2, "why")
    assert substituted("a 4200 b 4200", (sub,), {"port": "1"}) == "a 1 b 1"
    with pytest.raises(AssertionError, match="1 times, not 2"):
        substituted("a 4200", (sub,), {"port": "1"})


def test_the_flow_docstring_examples_publish_under_out() -> None:
    # Never into samples/: without a target each run publishes into its own logs/verifier/.
    from flows import grade_run

    doc = grade_run.__doc__ or ""
    commands = [line.strip() for line in doc.splitlines() if "samples/sweep" in line]
    assert len(commands) >= 3, commands
    for command in commands:
        assert re.search(r'--target out/|"target": "out/', command), command
    assert "--target out/demo" in README.read_text()
