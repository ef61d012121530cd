#!/usr/bin/env bash
# The test command: install what the tests need into ./.venv, then run them
# all on two workers. Extra arguments go to pytest.
set -euo pipefail
TRUEREWARD_EXTRAS=dev source "$(dirname "$0")/venv.sh"
export PREFECT_SERVER_ANALYTICS_ENABLED=false DO_NOT_TRACK=1
exec .venv/bin/python -m pytest -n 2 "$@"
