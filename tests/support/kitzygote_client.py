"""The rewardkit zygote's client, run by the stand-in ``python``
(``tests/support/kitzygote.py``) as ``python -I -S kitzygote_client.py SOCKET
ARGS...``: hands its arguments, working directory, environment and standard
streams to the zygote's server, waits, and ends as the program ended (its
exit status, or killed by the same signal). Standard library only."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys


def main(path: str, argv: list[str]) -> None:
    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        socket.send_fds(conn, [struct.pack("!I", len(request))], [0, 1, 2])
        conn.sendall(request)
        answer = b""
        while more := conn.recv(4096):
            answer += more
    if not answer:
        sys.exit("the rewardkit zygote ended the program without a status")
    status = int(json.loads(answer)["status"])
    if status < 0:
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
