"""Hostile workspaces: what a run cannot make a criterion do (docs/criteria.md,
"Hostile workspaces"). Each answer comes in bounded time, reads nothing
outside the workspace, writes nothing in it, and leaves nothing running."""

from __future__ import annotations

import hashlib
import http.server
import os
import shlex
import socket
import sqlite3
import subprocess
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import truereward as tr
from tests.support.criteria_rows import grade, passed, refused
from truereward.criteria.commands import shell_syntax
from truereward.readers import Evidence


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    root.mkdir()
    (root / "notes.txt").write_text("hello\n")
    return root


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("the grader's secret\n")
    return outside


# --- files ------------------------------------------------------------------------------------


def test_a_symlink_out_is_never_followed(app: Path, secret: Path) -> None:
    os.symlink(secret / "secret.txt", app / "link.txt")
    os.symlink(secret, app / "dir")
    for criterion, options in (
        ("file_contains", {"path": "link.txt", "text": "secret"}),
        ("file_contains", {"path": "dir/secret.txt", "text": "secret"}),
        ("file_exists", {"path": "link.txt"}),
        ("file_not_exists", {"path": "link.txt"}),
        ("file_not_exists", {"path": "dir/absent.txt"}),
        ("files_equal", {"path1": "notes.txt", "path2": "link.txt"}),
    ):
        row = grade(app, criterion, **options)
        assert not passed(row) and "leads out of the workspace" in row.why, (criterion, options)
    document = tr.grade_evidence(
        "workspace",
        str(app),
        [
            {
                "id": "a",
                "kind": "fail_to_pass",
                "options": {"criterion": "file_contains", "path": "link.txt", "text": "x"},
            }
        ],
    )
    assert document.evidence == ()  # nothing of the secret was read


def test_a_dangling_link_does_not_exist(app: Path) -> None:
    os.symlink("nowhere.txt", app / "dangling")
    assert not passed(grade(app, "file_exists", path="dangling"))
    assert passed(grade(app, "file_not_exists", path="dangling"))


def test_a_link_swapped_in_after_the_check_is_not_followed(app: Path, secret: Path) -> None:
    from truereward.criteria.files import WorkspaceFiles
    from truereward.criteria.kind import Failure

    (app / "sub").mkdir()
    (app / "sub" / "secret.txt").write_text("inside")
    files = WorkspaceFiles(Evidence(url=str(app)), live=True)
    files.check()
    resolved, parts = files.resolve("sub/secret.txt")
    # The run swaps the directory for a link out between resolving and reading.
    (app / "sub" / "secret.txt").unlink()
    (app / "sub").rmdir()
    os.symlink(secret, app / "sub")
    with pytest.raises((Failure, FileNotFoundError, NotADirectoryError, OSError)):
        files._read_local(resolved, parts, 1 << 20)


@pytest.mark.parametrize("make", ["fifo", "directory", "huge", "device-link"])
def test_what_is_not_a_regular_file_fails_at_once(app: Path, make: str) -> None:
    target = app / "thing"
    if make == "fifo":
        os.mkfifo(target)
    elif make == "directory":
        target.mkdir()
    elif make == "huge":
        with target.open("wb") as handle:
            handle.truncate(100 << 20)  # sparse: 100 MiB that cost no disk
    else:
        os.symlink("/dev/zero", target)
    started = time.monotonic()
    row = grade(app, "file_contains", path="thing", text="x")
    assert time.monotonic() - started < 5
    assert not passed(row)
    said = {
        "fifo": "FIFO",
        "directory": "directory",
        "huge": "more than",
        "device-link": "leads out",
    }[make]
    assert said in row.why


@pytest.mark.parametrize("path", ["/etc/hostname", "a\x00b", "x/../notes.txt"])
def test_paths_a_stored_run_cannot_name(app: Path, path: str) -> None:
    stored = Evidence(url=str(app), root=str(app.parent))
    spec = [
        {"id": "a", "kind": "fail_to_pass", "options": {"criterion": "file_exists", "path": path}}
    ]
    (row,) = tr.read("workspace", stored, spec)
    refused(row, "CASE_INVALID")


def test_an_absolute_path_is_read_in_a_verifier(app: Path, secret: Path) -> None:
    assert passed(grade(app, "file_contains", path=str(secret / "secret.txt"), text="secret"))


# --- commands ---------------------------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not reaped by its parent, now init) is not running.
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())


def _pid(path: Path) -> int:
    for _ in range(50):
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def test_a_command_that_floods_its_output_fails_at_once(app: Path) -> None:
    started = time.monotonic()
    row = grade(app, "command_output_contains", cmd=["yes"], text="never", max_output=1 << 16)
    assert time.monotonic() - started < 5
    assert not passed(row) and "more than 65536 bytes" in row.why
    row = grade(app, "command_succeeds", cmd="yes >&2", shell=True, max_output=1 << 16)
    assert not passed(row)


def test_a_command_that_hangs_is_killed_with_everything_it_started(app: Path) -> None:
    started = time.monotonic()
    row = grade(
        app,
        "command_succeeds",
        cmd="sleep 300 & echo $! > sleeper.pid; wait",
        shell=True,
        timeout=0.5,
    )
    assert time.monotonic() - started < 5
    refused(row, "GRADER_TIMEOUT")
    pid = _pid(app / "sleeper.pid")
    for _ in range(50):
        if not _alive(pid):
            break
        time.sleep(0.05)
    assert not _alive(pid)


def test_what_a_command_leaves_running_is_killed_when_it_exits(app: Path) -> None:
    row = grade(
        app,
        "command_succeeds",
        cmd="sleep 300 >/dev/null 2>&1 & echo $! > daemon.pid",
        shell=True,
    )
    assert passed(row)
    pid = _pid(app / "daemon.pid")
    for _ in range(50):
        if not _alive(pid):
            break
        time.sleep(0.05)
    assert not _alive(pid)


def test_a_command_reads_nothing_from_standard_input(app: Path) -> None:
    row = grade(app, "command_output_matches", cmd=["cat"], expected="", timeout=5)
    assert passed(row)


def test_a_command_never_runs_outside_the_workspace(app: Path, secret: Path) -> None:
    os.symlink(secret, app / "out")
    row = grade(app, "command_succeeds", cmd=["touch", "planted"], cwd="out")
    assert not passed(row) and "leads out" in row.why
    assert not (secret / "planted").exists()


def test_commands_never_run_over_a_stored_run(app: Path) -> None:
    stored = Evidence(url=str(app), root=str(app.parent))
    spec = [
        {
            "id": "c",
            "kind": "fail_to_pass",
            "options": {"criterion": "command_succeeds", "cmd": ["touch", "ran"]},
        },
        {
            "id": "h",
            "kind": "fail_to_pass",
            "options": {"criterion": "http_status_equals", "url": "http://127.0.0.1:9/"},
        },
    ]
    for row in tr.read("workspace", stored, spec):
        refused(row, "CASE_INVALID")
        assert "stored run" in row.why
    assert not (app / "ran").exists()


#: Words a shell and shlex might read differently.
WORD = st.text(alphabet="ab \t'\"\\$`*?[]{}~#|&;<>()=\n.-_/", max_size=12)


@given(st.lists(WORD, min_size=1, max_size=4))
def test_words_joined_by_shlex_need_no_shell(words: list[str]) -> None:
    command = shlex.join(words)
    if "=" in words[0] and shell_syntax(command) == "a variable assignment":
        return  # VAR=value first: a shell would assign, and shell_syntax says so
    assert shell_syntax(command) is None
    assert shlex.split(command) == words


@given(st.text(alphabet="ab \t'\"\\$`*|;\n#~{}=<>()?[]&", max_size=16))
@example('a"\\$b"')
@example("a\\\nb")
@example("\\")
def test_a_command_without_shell_syntax_has_the_words_a_shell_gives(command: str) -> None:
    if shell_syntax(command) is not None:
        return
    done = subprocess.run(
        ["/bin/sh", "-c", "printf '%s\\0' " + command],
        capture_output=True,
        check=False,
        timeout=10,
    )
    words = shlex.split(command)
    if not words:
        return
    assert done.returncode == 0
    assert done.stdout.decode().split("\0")[:-1] == words


# --- SQLite -----------------------------------------------------------------------------------


@pytest.fixture
def database(app: Path) -> Path:
    path = app / "db.sqlite"
    connection = sqlite3.connect(path)
    connection.executescript("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2);")
    connection.commit()
    connection.close()
    return path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "query",
    [
        "DELETE FROM t",
        "INSERT INTO t VALUES (3)",
        "UPDATE t SET x = 0",
        "CREATE TABLE u (y)",
        "DROP TABLE t",
        "PRAGMA journal_mode = DELETE",
        "PRAGMA user_version = 7",
        "ATTACH DATABASE 'other.sqlite' AS other",
        "VACUUM",
        "SELECT 1; DELETE FROM t",
    ],
)
def test_a_query_cannot_write(app: Path, database: Path, query: str) -> None:
    before = sorted(os.listdir(app)), _digest(database)
    row = grade(app, "sqlite_query_equals", db_path="db.sqlite", query=query, expected=1)
    refused(row, "CASE_INVALID")
    assert (sorted(os.listdir(app)), _digest(database)) == before


def test_a_pragma_that_reads_is_a_query(app: Path, database: Path) -> None:
    row = grade(
        app, "sqlite_query_equals", db_path="db.sqlite", query="PRAGMA user_version", expected=0
    )
    assert passed(row)


def test_a_query_that_runs_forever_is_stopped(app: Path, database: Path) -> None:
    endless = "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT MAX(n) FROM c"
    started = time.monotonic()
    row = grade(
        app, "sqlite_query_equals", db_path="db.sqlite", query=endless, expected=1, timeout=0.5
    )
    assert time.monotonic() - started < 5
    refused(row, "GRADER_TIMEOUT")


def test_a_query_cannot_build_a_huge_value(app: Path, database: Path) -> None:
    row = grade(
        app,
        "sqlite_query_equals",
        db_path="db.sqlite",
        query="SELECT length(hex(zeroblob(20000000)))",
        expected=1,
    )
    refused(row, "CASE_INVALID")


@pytest.mark.parametrize(
    "content", [b"not a database at all", b"SQLite format 3\x00" + b"\xff" * 4000]
)
def test_a_file_that_is_not_a_database_fails(app: Path, content: bytes) -> None:
    (app / "db.sqlite").write_bytes(content)
    row = grade(
        app, "sqlite_query_equals", db_path="db.sqlite", query="SELECT COUNT(*) FROM t", expected=0
    )
    assert not passed(row)


def test_a_database_linked_from_outside_is_not_opened(
    app: Path, database: Path, secret: Path
) -> None:
    outside = secret / "db.sqlite"
    database.rename(outside)
    os.symlink(outside, app / "db.sqlite")
    row = grade(
        app, "sqlite_query_equals", db_path="db.sqlite", query="SELECT COUNT(*) FROM t", expected=2
    )
    assert not passed(row) and "leads out" in row.why


# --- XLSX and images --------------------------------------------------------------------------


@pytest.mark.slow
def test_a_zip_bomb_workbook_is_not_opened(app: Path) -> None:
    with (
        zipfile.ZipFile(app / "bomb.xlsx", "w", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as part,
    ):
        chunk = b"\0" * (1 << 20)
        for _ in range(300):
            part.write(chunk)
    assert (app / "bomb.xlsx").stat().st_size < 2 << 20
    started = time.monotonic()
    row = grade(app, "xlsx_cell_equals", path="bomb.xlsx", cell="A1", expected=1)
    assert time.monotonic() - started < 5
    assert not passed(row) and "expands to" in row.why


def test_a_workbook_with_an_entity_bomb_fails(app: Path) -> None:
    import io
    import re

    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.active["A1"] = "text"
    buffer = io.BytesIO()
    workbook.save(buffer)
    entities = "".join(
        f'<!ENTITY lol{n} "{f"&lol{n - 1};" * 10 if n else "lol"}">' for n in range(10)
    )
    with (
        zipfile.ZipFile(buffer) as source,
        zipfile.ZipFile(app / "lol.xlsx", "w") as target,
    ):
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "xl/workbook.xml":  # parsed whenever the workbook is opened
                body = re.sub(rb"^<\?xml[^>]*\?>", b"", data)
                data = f'<?xml version="1.0"?><!DOCTYPE lolz [{entities}]>'.encode() + body
            target.writestr(item, data)
    started = time.monotonic()
    row = grade(app, "xlsx_cell_equals", path="lol.xlsx", cell="A1", expected="text")
    assert time.monotonic() - started < 5
    assert not passed(row) and "not an xlsx workbook" in row.why


@pytest.mark.slow
def test_image_bombs(app: Path) -> None:
    from PIL import Image

    Image.new("1", (12000, 12000)).save(app / "big.png")  # 144 M pixels, a few hundred KB
    Image.new("1", (12000, 12000)).save(app / "big2.png")
    started = time.monotonic()
    row = grade(app, "image_size_equals", path="big.png", width=12000, height=12000)
    assert passed(row)  # the header alone
    refused(grade(app, "image_similarity", path1="big.png", path2="big2.png"), "CASE_INVALID")
    assert time.monotonic() - started < 10
    # A header that claims far more pixels than Pillow opens at all.
    header = bytearray((app / "big.png").read_bytes())
    header[16:24] = (200_000).to_bytes(4, "big") + (200_000).to_bytes(4, "big")
    (app / "claims.png").write_bytes(bytes(header))
    row = grade(app, "image_size_equals", path="claims.png", width=1, height=1)
    assert not passed(row)


def test_a_truncated_image_fails(app: Path) -> None:
    from PIL import Image

    Image.new("RGB", (64, 64), (5, 5, 5)).save(app / "a.png")
    data = (app / "a.png").read_bytes()
    (app / "cut.png").write_bytes(data[: len(data) // 2])
    row = grade(app, "image_similarity", path1="a.png", path2="cut.png")
    assert not passed(row)


# --- HTTP -------------------------------------------------------------------------------------


class _Hostile(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/elsewhere":
            self.send_response(302)
            self.send_header("Location", "http://example.invalid/")
            self.end_headers()
        elif self.path == "/loop":
            self.send_response(302)
            self.send_header("Location", "/loop")
            self.end_headers()
        elif self.path == "/huge":
            self.send_response(200)
            self.end_headers()
            try:
                for _ in range(64):
                    self.wfile.write(b"x" * (1 << 20))
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif self.path in ("/drip-headers", "/drip-body"):
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            if self.path == "/drip-body":
                self.wfile.write(b"Content-Length: 1000000\r\n\r\n")
            try:
                for _ in range(600):  # a byte every 50 ms, for half a minute
                    self.wfile.write(b"x")
                    self.wfile.flush()
                    time.sleep(0.05)
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif self.path == "/garbage":
            self.wfile.write(b"this is not HTTP\r\n\r\n")
        else:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def service() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_http_only_to_hosts_the_task_names(app: Path, service: str) -> None:
    for url in (
        "http://example.invalid/",
        "http://10.0.0.1/",
        "file:///etc/passwd",
        "ftp://localhost/",
    ):
        refused(grade(app, "http_status_equals", url=url), "CASE_INVALID")
    port = service.rsplit(":", 1)[1]
    row = grade(
        app,
        "http_status_equals",
        url=f"http://127.0.0.2:{port}/",
        reader={"allowed_hosts": ["127.0.0.1"]},
    )
    refused(row, "CASE_INVALID")
    # Named but not resolvable: the request cannot be made.
    row = grade(
        app,
        "http_status_equals",
        url="http://no-such-host.invalid/",
        reader={"allowed_hosts": ["no-such-host.invalid"]},
    )
    refused(row, "SERVICE_UNREACHABLE")


def test_a_hostile_service(app: Path, service: str) -> None:
    assert passed(grade(app, "http_status_equals", url=f"{service}/fine"))
    row = grade(app, "http_status_equals", url=f"{service}/elsewhere")
    assert not passed(row) and "does not name" in row.why
    assert passed(
        grade(
            app,
            "http_status_equals",
            url=f"{service}/elsewhere",
            status=302,
            follow_redirects=False,
        )
    )
    row = grade(app, "http_status_equals", url=f"{service}/loop")
    assert not passed(row) and "redirects" in row.why
    started = time.monotonic()
    row = grade(app, "http_response_contains", url=f"{service}/huge", text="y", max_body=1 << 16)
    assert time.monotonic() - started < 5
    assert not passed(row) and "larger than" in row.why
    row = grade(app, "http_status_equals", url=f"{service}/garbage")
    assert not passed(row) and "not HTTP" in row.why


@pytest.mark.parametrize("path", ["/drip-headers", "/drip-body"])
def test_a_service_that_drips_is_cut_at_the_timeout(app: Path, service: str, path: str) -> None:
    started = time.monotonic()
    row = grade(app, "http_response_contains", url=f"{service}{path}", text="y", timeout=1)
    assert time.monotonic() - started < 3
    refused(row, "GRADER_TIMEOUT")


def test_unreachable_is_refused_unless_the_task_says(app: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/"
    refused(grade(app, "http_status_equals", url=url), "SERVICE_UNREACHABLE")
    row = grade(app, "http_status_equals", url=url, unreachable_fails=True)
    assert not passed(row)


def test_localhost_must_resolve_to_loopback(app: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A run in a shared environment can point localhost elsewhere in /etc/hosts;
    # the resolver's answer is stood in for here rather than editing the machine's.
    def resolved(*_: Any, **__: Any) -> list[Any]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("203.0.113.7", 80))]

    monkeypatch.setattr(socket, "getaddrinfo", resolved)
    row = grade(app, "http_status_equals", url="http://localhost/")
    refused(row, "SERVICE_UNREACHABLE")
    assert "not loopback" in row.why
