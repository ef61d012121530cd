#!/usr/bin/env bash
# Builds truereward's wheel from this clone into the build context of each
# Harbor sample task, whose Dockerfile installs it (docs/harbor.md): the agent's
# image of samples/harbor-task (its verifier shares that image) and the
# verifier's image of samples/harbor-task-separate. Run it before
# `harbor run -p samples/harbor-task` (or -separate); the wheels are git-ignored.
#
#   bash infra/harbor-wheel.sh            # into samples/
#   bash infra/harbor-wheel.sh DIR        # into DIR/harbor-task... (copies of the samples)
set -euo pipefail
source "$(dirname "$0")/uv.sh"
samples="$(cd "${1:-samples}" && pwd)"
venv_uv
built="$(mktemp -d)"
trap 'rm -rf "$built"' EXIT
# hatchling at the lock's version, as infra/venv.sh builds the project.
.venv/bin/uv build --quiet --wheel --python .venv/bin/python \
  --build-constraints infra/lock.txt --out-dir "$built" .
for context in "$samples/harbor-task/environment" "$samples/harbor-task-separate/tests"; do
  rm -f "$context"/truereward-*.whl
  cp "$built"/truereward-*.whl "$context/"
  echo "$context/$(basename "$built"/truereward-*.whl)"
done
