#!/usr/bin/env bash
# Refresh infra/lock.txt, the exact versions infra/venv.sh installs: every
# extra of pyproject.toml and the tools of infra/lock.in, one universal lock
# for Python 3.11 and newer on every platform (markers where they differ),
# resolved by the uv the lock pins (installed into ./.venv first if needed).
#
#   bash infra/lock.sh                            # after editing requirements: keep every pin that still fits
#   bash infra/lock.sh --upgrade                  # every package at the newest version the ranges allow
#   bash infra/lock.sh --upgrade-package prefect  # one package (and what it needs) at its newest
#
# Then run the tests (bash infra/test.sh installs the new lock) and commit
# pyproject.toml and infra/lock.txt together. Extra arguments go to
# `uv pip compile`.
set -euo pipefail
source "$(dirname "$0")/uv.sh"
venv_uv
exec .venv/bin/uv pip compile pyproject.toml infra/lock.in \
  --all-extras --universal --python-version 3.11 \
  --custom-compile-command "bash infra/lock.sh" \
  --output-file infra/lock.txt --quiet "$@"
