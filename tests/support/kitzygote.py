"""rewardkit's runs at a fraction of their CPU: a zygote.

rewardkit imports litellm, about 4 s of CPU before it does anything, and
the bridge's tests run rewardkit some thirty times. :func:`rewardkit_zygote`
starts one process in rewardkit's venv that imports rewardkit once
(``kitzygote_server.py``) and hands out stand-ins for that venv's ``python``
and ``rewardkit`` commands: shell scripts that ``exec`` a small client
(``kitzygote_client.py``), which has the program run in a fresh fork of the
zygote with the client's arguments, standard streams, directory and
environment, and ends as it ended (exit status or signal).

So each run is rewardkit's own code from a pristine, already-imported
interpreter, with what the real command would see, except that it runs
isolated (``-I``) even as a console script. The bridge still starts a
process of its own and kills its process group on its time bound; the
zygote kills a run's session when its client goes away. What a run leaves
behind in a forked interpreter cannot leak into the next: every run is a
new fork of the zygote, which never runs anything itself.

One zygote per pytest worker, ended when the worker exits. The real
interpreter stays tested end to end: ``tests/prefect/test_rewardkit_flow.py``
and the version check run it, not the zygote.
"""

from __future__ import annotations

import atexit
import functools
import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.support.rewardkit import rewardkit_python

SERVER = Path(__file__).with_name("kitzygote_server.py")
CLIENT = Path(__file__).with_name("kitzygote_client.py")
START_TIMEOUT = 300


class KitZygote:
    """A started zygote: :attr:`python` and :attr:`rewardkit` stand in for
    the venv's commands. :meth:`close` ends it and removes its directory."""

    def __init__(self, python: Path) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="trk-zygote-"))  # short: a socket path
        socket_path = self.home / "socket"
        env = {
            **os.environ,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "HOME": str(self.home),
            "PYTHONWARNINGS": "ignore",
        }
        with (self.home / "server.log").open("wb") as log:
            self.process = subprocess.Popen(
                [str(python), "-I", str(SERVER), str(socket_path)],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
                start_new_session=True,
            )
        assert self.process.stdout is not None
        first = self.process.stdout.readline().strip()
        if first != "ready":
            self.process.kill()
            self.process.wait()
            said = (self.home / "server.log").read_text(errors="replace")
            raise RuntimeError(f"the rewardkit zygote did not start ({first!r}):\n{said}")
        client = [str(python), "-I", "-S", str(CLIENT), str(socket_path)]
        self.python = self._command("python", client)
        self.rewardkit = self._command("rewardkit", [*client, str(python.parent / "rewardkit")])

    def _command(self, name: str, argv: list[str]) -> Path:
        path = self.home / "bin" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(f'#!/bin/sh\nexec {shlex.join(argv)} "$@"\n')
        path.chmod(0o755)
        return path

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        shutil.rmtree(self.home, ignore_errors=True)


@functools.cache
def rewardkit_zygote() -> KitZygote:
    """This worker's zygote over harbor-rewardkit's venv, started on first
    use (raises :class:`~tests.support.rewardkit.RewardkitUnavailable` as
    the venv does)."""
    zygote = KitZygote(rewardkit_python())
    atexit.register(zygote.close)
    return zygote
