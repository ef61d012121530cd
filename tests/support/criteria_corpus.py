"""A Harbor-style workspace and the criterion cases run on it by truereward and
by harbor-rewardkit 0.2.3 side by side (``tests/criteria/test_criteria_parity.py``).

:func:`build` writes, under a directory: ``app/`` (the workspace: text, JSON,
CSV, SQLite, XLSX and PNG files, a script, a symlink out, files rewardkit
and truereward read differently) and ``logs/agent/`` (an ATIF trajectory of
three agent turns, a malformed one, and a JSON file that is no trajectory).
:func:`cases` lists the corpus for a built root and the port of the HTTP
service :func:`serve` starts. Each case is one criterion with the arguments
both take (``args``), what only truereward takes (``ours``: ``shell`` for a
command using shell syntax, ``min`` for a graded criterion) and what we
expect of the pair:

- ``same``: rewardkit grades the case, and truereward gives its score (to
  the 4 decimals rewardkit writes);
- ``refuse``: rewardkit scores a fault 0 (a timeout, a request that raised,
  a missing trajectory or workspace, a missing program), and truereward
  refuses the case with ``code`` (the grader's);
- ``differ``: a documented difference (``docs/criteria.md``, "Parity with
  rewardkit"), with what each side gives.

``python -m tests.support.criteria_corpus DIR`` writes the workspace for a look.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypedDict

NOTES = "The quick brown fox jumps over the lazy dog.\nIt ran twice around the yard.\n"


class Case(TypedDict, total=False):
    id: str
    criterion: str
    args: dict[str, Any]
    ours: dict[str, Any]
    expect: Literal["same", "refuse", "differ"]
    code: str
    workspace: str
    # For "differ": what rewardkit gives (a value, or "crash") and what we give
    # (a score, or a code).
    kit: float | str
    truereward: float | str
    why: str


# --- the workspace ------------------------------------------------------------------------------


def _png(path: Path, size: tuple[int, int], pixels: dict[tuple[int, int], tuple[int, ...]]) -> None:
    from PIL import Image

    image = Image.new("RGBA", size, (10, 20, 30, 255))
    for xy, colour in pixels.items():
        image.putpixel(xy, colour)
    image.save(path)


def _trajectory(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schema_version": "ATIF-v1.6",
        "session_id": "run-0042",
        "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": "some-model"},
        "steps": steps,
    }


def _call(number: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"tool_call_id": f"call-{number}", "function_name": name, "arguments": arguments}


def build(root: Path) -> dict[str, Path]:
    """Write the workspace and the trajectories under ``root``; their paths."""
    app = root / "app"
    logs = root / "logs" / "agent"
    (app / "src").mkdir(parents=True)
    logs.mkdir(parents=True)
    (app / "notes.txt").write_text(NOTES)
    (app / "answer.txt").write_text("42\n")
    (app / "expected.txt").write_text("42")
    (app / "crlf.txt").write_bytes(b"line one\r\nline two\r\n")
    (app / "latin1.txt").write_bytes("caf\xe9 cr\xe8me\n".encode("latin-1"))
    (app / "src" / "main.py").write_text("print('hello')\n")
    (app / "config.json").write_text(
        json.dumps(
            {
                "name": "demo",
                "version": 3,
                "debug": False,
                "enabled": 1,
                "server": {"port": 8080, "hosts": ["a", "b", "c"], "tls": {"on": True}},
            }
        )
    )
    (app / "nan.json").write_text('{"a": 1, "ratio": NaN}')
    (app / "duplicate.json").write_text('{"a": 1, "a": 2}')
    (app / "table.csv").write_text("name,score,team\nalice,42,red\nbob,7,blue\ncarol,19,red\n")
    (app / "bom.csv").write_bytes("\ufeffname,score\nalice,42\n".encode())
    database = sqlite3.connect(app / "data.sqlite")
    database.executescript(
        "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, score REAL, active INTEGER);"
        "INSERT INTO users VALUES (1, 'alice', 42.5, 1), (2, 'bob', 7, 0), (3, 'carol', 19, 1);"
    )
    database.commit()
    database.close()
    (app / "not-a-database.sqlite").write_text("this is not a database\n")
    _xlsx(app / "report.xlsx")
    _png(app / "image.png", (4, 3), {(0, 0): (255, 0, 0, 255)})
    _png(app / "image-copy.png", (4, 3), {(0, 0): (255, 0, 0, 255)})
    _png(app / "image-3-differ.png", (4, 3), {(1, 1): (0, 0, 0, 255), (2, 2): (1, 2, 3, 4)})
    _png(app / "image-wide.png", (8, 3), {})
    script = app / "run.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    script.chmod(0o755)
    os.symlink("/etc/hostname", app / "outside-link")
    (logs / "trajectory.json").write_text(
        json.dumps(
            _trajectory(
                [
                    {"step_id": 1, "source": "user", "message": "Fix the build."},
                    {
                        "step_id": 2,
                        "source": "agent",
                        "message": "Looking around.",
                        "tool_calls": [_call(1, "bash", {"command": "ls"})],
                    },
                    {
                        "step_id": 3,
                        "source": "agent",
                        "message": "Reading and testing.",
                        "tool_calls": [
                            _call(2, "read_file", {"path": "src/main.py"}),
                            _call(3, "bash", {"command": "pytest"}),
                        ],
                    },
                    {"step_id": 4, "source": "agent", "message": "Done."},
                ]
            )
        )
    )
    (logs / "broken.json").write_text('{"schema_version": "ATIF-v1.6", "steps": [')
    (logs / "not-atif.json").write_text('{"hello": "world"}')
    return {"root": root, "app": app, "logs": logs}


def _xlsx(path: Path) -> None:
    import datetime

    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "Summary"
    sheet.append(["name", "score", "passed", "when"])
    sheet.append(["alice", 42, True, datetime.datetime(2026, 1, 31, 9, 30)])
    sheet.append(["bob", 7.5, False, None])
    other = workbook.create_sheet("Totals")
    other["A1"] = "total"
    other["B1"] = 49.5
    workbook.save(path)


# --- the HTTP service ---------------------------------------------------------------------------


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/slow":
            time.sleep(3)
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/health")
            self.end_headers()
            return
        status, body = {
            "/health": (200, b"service healthy: 3 users"),
            "/slow": (200, b"late"),
            "/error": (500, b"internal error"),
        }.get(self.path, (404, b"not found"))
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)  # the client may have given up (the timeout case)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serve() -> Iterator[int]:
    """An HTTP service on loopback (a free port) for the corpus; its port."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    # A short poll: shutdown() waits for the loop to look again.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


# --- the cases ----------------------------------------------------------------------------------


def _same(case_id: str, criterion: str, ours: dict[str, Any] | None = None, **args: Any) -> Case:
    return {
        "id": case_id,
        "criterion": criterion,
        "args": args,
        "ours": ours or {},
        "expect": "same",
    }


def _refuse(
    case_id: str, criterion: str, code: str, ours: dict[str, Any] | None = None, **args: Any
) -> Case:
    return {
        "id": case_id,
        "criterion": criterion,
        "args": args,
        "ours": ours or {},
        "expect": "refuse",
        "code": code,
    }


def _differ(
    case_id: str,
    criterion: str,
    kit: float | str,
    truereward: float | str,
    why: str,
    **args: Any,
) -> Case:
    return {
        "id": case_id,
        "criterion": criterion,
        "args": args,
        "ours": {},
        "expect": "differ",
        "kit": kit,
        "truereward": truereward,
        "why": why,
    }


def cases(paths: dict[str, Path], port: int, dead_port: int) -> list[Case]:
    """The corpus over the workspace of :func:`build` (module docstring)."""
    logs = paths["logs"]
    trajectory = str(logs / "trajectory.json")
    url = f"http://127.0.0.1:{port}"
    shell = {"shell": True}
    corpus: list[Case] = [
        # files
        _same("exists", "file_exists", path="notes.txt"),
        _same("exists-directory", "file_exists", path="src"),
        _same("exists-absent", "file_exists", path="missing.txt"),
        _same("not-exists", "file_not_exists", path="missing.txt"),
        _same("not-exists-present", "file_not_exists", path="notes.txt"),
        _same("contains", "file_contains", path="notes.txt", text="quick brown fox"),
        _same("contains-across-lines", "file_contains", path="notes.txt", text="dog.\nIt ran"),
        _same("contains-not", "file_contains", path="notes.txt", text="purple"),
        _same("contains-absent-file", "file_contains", path="missing.txt", text="x"),
        _same("contains-crlf", "file_contains", path="crlf.txt", text="one\nline two"),
        _same("regex", "file_contains_regex", path="notes.txt", pattern=r"\bf[aeiou]x\b"),
        _same("regex-anchored-no", "file_contains_regex", path="notes.txt", pattern=r"^ran"),
        _same("matches", "file_matches", path="answer.txt", expected="42"),
        _same("matches-not", "file_matches", path="answer.txt", expected="41"),
        _same("files-equal", "files_equal", path1="answer.txt", path2="expected.txt"),
        _same("files-equal-not", "files_equal", path1="answer.txt", path2="notes.txt"),
        _same(
            "diff-ratio",
            "diff_ratio",
            {"min": 0.9},
            path="notes.txt",
            expected="The quick brown fox jumped over the lazy dog.\nIt ran around the yard.",
        ),
        _same("diff-ratio-exact", "diff_ratio", path="answer.txt", expected="42"),
        _same("diff-ratio-absent", "diff_ratio", {"min": 0.5}, path="missing.txt", expected="x"),
        # structured files
        _same("json-key", "json_key_equals", path="config.json", key="name", expected="demo"),
        _same(
            "json-key-number", "json_key_equals", path="config.json", key="version", expected=3.0
        ),
        _same("json-key-wrong", "json_key_equals", path="config.json", key="version", expected=2),
        _same("json-key-absent", "json_key_equals", path="config.json", key="owner", expected="x"),
        _same(
            "json-path",
            "json_path_equals",
            path="config.json",
            json_path="server.port",
            expected=8080,
        ),
        _same(
            "json-path-index",
            "json_path_equals",
            path="config.json",
            json_path="server.hosts.1",
            expected="b",
        ),
        _same(
            "json-path-last",
            "json_path_equals",
            path="config.json",
            json_path="server.hosts.-1",
            expected="c",
        ),
        _same(
            "json-path-object",
            "json_path_equals",
            path="config.json",
            json_path="server.tls",
            expected={"on": True},
        ),
        _same(
            "json-path-nowhere",
            "json_path_equals",
            path="config.json",
            json_path="server.x.y",
            expected=1,
        ),
        _same(
            "csv-by-name", "csv_cell_equals", path="table.csv", row=0, col="score", expected="42"
        ),
        _same("csv-by-number", "csv_cell_equals", path="table.csv", row=2, col=0, expected="bob"),
        _same("csv-header", "csv_cell_equals", path="table.csv", row=0, col=2, expected="team"),
        _same(
            "csv-last-column", "csv_cell_equals", path="table.csv", row=3, col=-1, expected="red"
        ),
        _same("csv-wrong", "csv_cell_equals", path="table.csv", row=1, col="team", expected="red"),
        _same("csv-no-row", "csv_cell_equals", path="table.csv", row=9, col="name", expected="x"),
        _same("xlsx", "xlsx_cell_equals", path="report.xlsx", cell="A2", expected="alice"),
        _same("xlsx-number", "xlsx_cell_equals", path="report.xlsx", cell="B3", expected=7.5),
        _same(
            "xlsx-int-as-float", "xlsx_cell_equals", path="report.xlsx", cell="B2", expected=42.0
        ),
        _same("xlsx-bool", "xlsx_cell_equals", path="report.xlsx", cell="C3", expected=False),
        _same(
            "xlsx-sheet",
            "xlsx_cell_equals",
            path="report.xlsx",
            cell="B1",
            expected=49.5,
            sheet="Totals",
        ),
        _same("xlsx-empty", "xlsx_cell_equals", path="report.xlsx", cell="D3", expected=None),
        _same("xlsx-wrong", "xlsx_cell_equals", path="report.xlsx", cell="A3", expected="alice"),
        _same(
            "sqlite-count",
            "sqlite_query_equals",
            db_path="data.sqlite",
            query="SELECT COUNT(*) FROM users WHERE active = 1",
            expected=2,
        ),
        _same(
            "sqlite-text",
            "sqlite_query_equals",
            db_path="data.sqlite",
            query="SELECT name FROM users ORDER BY score DESC LIMIT 1",
            expected="alice",
        ),
        _same(
            "sqlite-real",
            "sqlite_query_equals",
            db_path="data.sqlite",
            query="SELECT score FROM users WHERE id = 1",
            expected=42.5,
        ),
        _same(
            "sqlite-wrong",
            "sqlite_query_equals",
            db_path="data.sqlite",
            query="SELECT COUNT(*) FROM users",
            expected=4,
        ),
        _same(
            "sqlite-no-row",
            "sqlite_query_equals",
            db_path="data.sqlite",
            query="SELECT name FROM users WHERE id = 99",
            expected="x",
        ),
        _same(
            "sqlite-no-table",
            "sqlite_query_equals",
            db_path="data.sqlite",
            query="SELECT COUNT(*) FROM orders",
            expected=0,
        ),
        _same(
            "sqlite-not-a-database",
            "sqlite_query_equals",
            db_path="not-a-database.sqlite",
            query="SELECT COUNT(*) FROM users",
            expected=0,
        ),
        _same("image-size", "image_size_equals", path="image.png", width=4, height=3),
        _same("image-size-wrong", "image_size_equals", path="image.png", width=3, height=4),
        _same("image-same", "image_similarity", path1="image.png", path2="image-copy.png"),
        _same(
            "image-some-differ",
            "image_similarity",
            {"min": 0.8},
            path1="image.png",
            path2="image-3-differ.png",
        ),
        _same("image-other-size", "image_similarity", path1="image.png", path2="image-wide.png"),
        # commands
        _same("command", "command_succeeds", cmd="test -f notes.txt"),
        _same("command-fails", "command_succeeds", cmd="test -f missing.txt"),
        _same("command-script", "command_succeeds", cmd="./run.sh"),
        _same("command-output", "command_output_contains", cmd="cat notes.txt", text="lazy dog"),
        _same(
            "command-output-shell",
            "command_output_contains",
            shell,
            cmd="grep -c red table.csv | tr -d ' '",
            text="2",
        ),
        _same("command-matches", "command_output_matches", cmd="cat answer.txt", expected="42"),
        _same("command-matches-not", "command_output_matches", cmd="cat notes.txt", expected="42"),
        _same(
            "command-regex",
            "command_output_matches_regex",
            cmd="wc -l table.csv",
            pattern=r"^\s*4\s",
        ),
        _refuse("command-timeout", "command_succeeds", "GRADER_TIMEOUT", cmd="sleep 5", timeout=1),
        _refuse("command-no-program", "command_succeeds", "TOOL_MISSING", cmd="no-such-program-rk"),
        # HTTP
        _same("http-status", "http_status_equals", url=f"{url}/health"),
        _same("http-status-404", "http_status_equals", url=f"{url}/nowhere", status=404),
        _same("http-status-wrong", "http_status_equals", url=f"{url}/error", status=200),
        _same("http-redirect", "http_status_equals", url=f"{url}/redirect", status=200),
        _same("http-body", "http_response_contains", url=f"{url}/health", text="healthy"),
        _same("http-body-not", "http_response_contains", url=f"{url}/health", text="sick"),
        _refuse(
            "http-refused",
            "http_status_equals",
            "SERVICE_UNREACHABLE",
            url=f"http://127.0.0.1:{dead_port}/health",
        ),
        _refuse(
            "http-timeout",
            "http_response_contains",
            "GRADER_TIMEOUT",
            url=f"{url}/slow",
            text="late",
            timeout=1,
        ),
        # the trajectory
        _same("tool-used", "trajectory_tool_used", tool_name="bash", path=trajectory),
        _same(
            "tool-used-twice",
            "trajectory_tool_used",
            tool_name="bash",
            min_count=2,
            path=trajectory,
        ),
        _same(
            "tool-used-thrice",
            "trajectory_tool_used",
            tool_name="bash",
            min_count=3,
            path=trajectory,
        ),
        _same("tool-not-used", "trajectory_tool_not_used", tool_name="web_search", path=trajectory),
        _same(
            "tool-not-used-but-was",
            "trajectory_tool_not_used",
            tool_name="read_file",
            path=trajectory,
        ),
        _same("turns-within", "trajectory_turn_count", max_turns=5, path=trajectory),
        _same("turns-over", "trajectory_turn_count", {"min": 0.5}, max_turns=2, path=trajectory),
        _same("turns-far-over", "trajectory_turn_count", max_turns=1, path=trajectory),
        _refuse(
            "trajectory-missing",
            "trajectory_tool_used",
            "TRAJECTORY_MISSING",
            tool_name="bash",
            path=str(logs / "absent.json"),
        ),
        _refuse(
            "trajectory-broken",
            "trajectory_turn_count",
            "TRAJECTORY_MALFORMED",
            max_turns=5,
            path=str(logs / "broken.json"),
        ),
        # the workspace itself
        {
            **_refuse("workspace-missing", "file_exists", "WORKSPACE_MISSING", path="notes.txt"),
            "workspace": str(paths["root"] / "no-such-app"),
        },
        # documented differences
        _differ(
            "json-true-is-not-1",
            "json_key_equals",
            1.0,
            0.0,
            "JSON's true is not the number 1 (rewardkit compares with Python's ==, "
            "where True == 1)",
            path="config.json",
            key="enabled",
            expected=True,
        ),
        _differ(
            "json-nan",
            "json_key_equals",
            1.0,
            0.0,
            "NaN is not JSON: the file is refused as JSON, and its criterion fails",
            path="nan.json",
            key="a",
            expected=1,
        ),
        _differ(
            "json-duplicate-key",
            "json_key_equals",
            1.0,
            0.0,
            "an object with a key twice means different things to different readers: not JSON",
            path="duplicate.json",
            key="a",
            expected=2,
        ),
        _differ(
            "csv-bom",
            "csv_cell_equals",
            0.0,
            1.0,
            "a UTF-8 byte-order mark is not part of the first header",
            path="bom.csv",
            row=0,
            col="name",
            expected="alice",
        ),
        _differ(
            "symlink-out",
            "file_exists",
            1.0,
            0.0,
            "a path that leads out of the workspace through a symlink is not followed: it fails",
            path="outside-link",
        ),
        _differ(
            "not-utf8",
            "file_contains",
            "crash",
            0.0,
            "rewardkit raises UnicodeDecodeError, exits 1 and writes nothing; the file is not "
            "text, so the criterion fails",
            path="latin1.txt",
            text="caf",
        ),
        _differ(
            "sqlite-not-a-database-unread",
            "sqlite_query_equals",
            1.0,
            0.0,
            "the file the task names must be a SQLite database, even for a query that reads "
            "none of it (SQLite never reads the file for SELECT 1)",
            db_path="not-a-database.sqlite",
            query="SELECT 1",
            expected=1,
        ),
        _differ(
            "trajectory-not-atif",
            "trajectory_turn_count",
            1.0,
            "TRAJECTORY_MALFORMED",
            "JSON without steps is no trajectory; rewardkit counts 0 turns, within any budget",
            max_turns=5,
            path=str(logs / "not-atif.json"),
        ),
    ]
    return corpus


def kit_call(case: Case) -> str:
    """The line of Python that calls the case's criterion in rewardkit."""
    arguments = ", ".join(f"{name}={value!r}" for name, value in case["args"].items())
    return f"criteria.{case['criterion']}({arguments})"


def our_options(case: Case) -> dict[str, Any]:
    """The case's options for truereward's criterion."""
    return {"criterion": case["criterion"], **case["args"], **case.get("ours", {})}


if __name__ == "__main__":  # pragma: no cover - a manual look
    built = build(Path(sys.argv[1]))
    print(json.dumps({name: str(path) for name, path in built.items()}, indent=2))
