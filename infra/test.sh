#!/usr/bin/env bash
# The test command: install what the tests need into ./.venv (and Debian's
# chromium for the browser test, infra/chromium.sh), then run them all on two
# workers. Extra arguments go to pytest: `bash infra/test.sh -m "not slow"` is the
# quick tier for the edit-test loop (README), the whole suite without it.
set -euo pipefail
TRUEREWARD_EXTRAS=dev source "$(dirname "$0")/venv.sh"
# Without a browser the browser test fails (with this message above it); the
# other tests still run.
bash infra/chromium.sh || echo "infra/test.sh: no chromium: the browser test will fail" >&2
export PREFECT_SERVER_ANALYTICS_ENABLED=false DO_NOT_TRACK=1
# Modules the tests' own subprocesses import (tests.support.*) get bytecode
# too, as venv.sh gives the project's (its comment says why).
.venv/bin/python -m compileall -q -j 0 tests >/dev/null
# Property tests draw the same examples every time (tests/conftest.py).
export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}"
# Two workers, one per core: with four, three Prefect servers on SQLite and the
# flows they serve overloaded the machine and a server answered 503. One test
# at a time to a worker (--maxschedchunk 1), the longest first
# (tests/conftest.py): no long test waits behind another.
exec .venv/bin/python -m pytest -n 2 --maxschedchunk 1 "$@"
