"""The rewardkit zygote's server, run in rewardkit's venv (``python -I
kitzygote_server.py SOCKET``): rewardkit (and litellm under it, about 4 s
of CPU) is imported once, then every program a client asks for runs in a
fork of this process, as a new session, with the client's standard streams,
working directory, environment and arguments. The fork's exit status goes
back to the client; a client that goes away has its fork's process group
killed. Standard library only, single-threaded (forking with threads is
not safe). ``tests/support/kitzygote.py`` says what this is for.
"""

from __future__ import annotations

import contextlib
import json
import os
import runpy
import selectors
import signal
import socket
import struct
import sys
import traceback

# The point of the zygote: these are imported once, before any fork.
import rewardkit
import rewardkit.__main__
import rewardkit.runner  # noqa: F401

HEADER = struct.Struct("!I")


def receive(conn: socket.socket) -> tuple[dict[str, object], list[int]]:
    """A request: a length, then JSON (argv, cwd, env); the three standard
    streams come as descriptors with the length."""
    head, fds, _, _ = socket.recv_fds(conn, HEADER.size, 3)
    (size,) = HEADER.unpack(head)
    data = b""
    while len(data) < size:
        more = conn.recv(size - len(data))
        if not more:
            raise EOFError("the client went away mid-request")
        data += more
    return json.loads(data), fds


def run(argv: list[str]) -> int:
    """What ``python -I ARGV`` does: ``-m MODULE``, ``-c CODE`` or a script;
    the options before them (``-I``, ``-S``, ``-u``...) are the zygote's own."""
    index = 0
    while index < len(argv) and argv[index].startswith("-") and argv[index] not in ("-m", "-c"):
        index += 1
    rest = argv[index:]
    try:
        if rest[:1] == ["-m"]:
            sys.argv = [rest[1], *rest[2:]]
            runpy.run_module(rest[1], run_name="__main__", alter_sys=True)
        elif rest[:1] == ["-c"]:
            sys.argv = ["-c", *rest[2:]]
            exec(compile(rest[1], "<string>", "exec"), {"__name__": "__main__"})
        else:
            sys.argv = rest
            runpy.run_path(rest[0], run_name="__main__")
    except SystemExit as done:
        if done.code is None:
            return 0
        if isinstance(done.code, int):
            return done.code
        print(done.code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001  (what the interpreter does with it)
        traceback.print_exc()
        return 1
    return 0


def child(request: dict[str, object], fds: list[int]) -> None:
    os.setsid()
    for target, fd in zip((0, 1, 2), fds, strict=True):
        os.dup2(fd, target)
        os.close(fd)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(str(request["cwd"]))
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})  # type: ignore[call-overload]
    status = run([str(item) for item in request["argv"]])  # type: ignore[attr-defined]
    # Unwound through main() to the interpreter's own exit: atexit handlers
    # run and threads are joined, as when a real interpreter ends.
    sys.exit(status)


def main(path: str) -> None:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(64)
    selector = selectors.DefaultSelector()
    selector.register(server, selectors.EVENT_READ)
    children: dict[int, socket.socket] = {}
    print("ready", flush=True)
    while True:
        for key, _ in selector.select(timeout=0.02):
            if key.fileobj is server:
                conn, _ = server.accept()
                conn.settimeout(30)  # a client that never sends must not stall the rest
                try:
                    request, fds = receive(conn)
                except (EOFError, OSError, ValueError):
                    conn.close()
                    continue
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    for other in (server, conn, *children.values()):
                        other.close()
                    child(request, fds)
                for fd in fds:
                    os.close(fd)
                children[pid] = conn
                selector.register(conn, selectors.EVENT_READ, pid)
            else:  # the client hung up before its program ended: end it
                pid = key.data
                selector.unregister(key.fileobj)
                with_group_killed(pid)
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            conn = children.pop(pid)
            with contextlib.suppress(KeyError, ValueError):
                selector.unregister(conn)
            with contextlib.suppress(OSError):
                conn.sendall(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode())
            conn.close()


def with_group_killed(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


if __name__ == "__main__":
    main(sys.argv[1])
