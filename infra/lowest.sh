#!/usr/bin/env bash
# The lowest versions pyproject.toml's ranges allow, installed and tested:
# the floors are what keeps the guarantees (canonical grade bytes, the S3
# conditional writes, the Prefect flows importing and running), so CI
# (.ci/run) tries them. For each environment of infra/lowest.py (core: every
# floor but Prefect's; prefect: Prefect's, with what they lift), it
#
#   1. resolves pyproject's requirements with `uv pip compile --resolution
#      lowest-direct` (each requirement at the lowest version its range
#      allows, what they need at the newest that fits; the floors pinned as
#      constraints, so floors that cannot be installed together fail here),
#      with the uv that infra/uv.sh provides;
#   2. installs them into a venv of its own (.venv-lowest-core,
#      .venv-lowest-prefect; ./.venv, the locked one, is not touched), and the
#      project, editable, without its dependencies;
#   3. checks that each floor was installed, and that every module of
#      truereward and flows/ and of the extras' requirements imports;
#   4. runs a subset of the tests (below), on two workers.
#
# Any failure stops it with a non-zero exit naming the environment and the
# step. The resolved versions are printed, and kept in the venv
# (requirements.txt).
#
# The tests, chosen for what the floors guard (the whole suite runs at the
# locked versions in infra/test.sh; this keeps to a few minutes):
#   core     test_strictjson, test_document, test_ctrf: the canonical bytes
#            (orjson) and the documents and views built on them (pydantic);
#            test_publish_local: the local publisher; test_publish_s3 (the
#            16-publisher race among them), test_publish_s3_faults and
#            test_publish_s3_client: the conditional writes through s3fs,
#            aiobotocore and botocore at their floors, against moto (the test
#            that installs an older botocore of its own is left to the suite);
#            test_plugin: the pytest plugin in real sessions, alone and under
#            pytest-xdist, at the pytest extra's floors; test_criteria,
#            test_criteria_hostile, test_criteria_trajectory: the workspace
#            criteria on openpyxl and Pillow at the xlsx and images floors;
#   prefect  prefect/test_prefect_tasks, prefect/test_prefect_flow (grade-run
#            on a real server, the Dask runner), grading/test_grading_s3,
#            grading/test_shards (grade-sweep's requests) and
#            prefect/test_prefect_blocks (prefect-aws blocks as targets); the
#            deployment tests take minutes each and are left to the suite
#            (grade-sweep's imports are checked in step 3).
#
#   bash infra/lowest.sh                 # both environments
#   bash infra/lowest.sh core [ARGS]     # one; ARGS go to pytest
set -euo pipefail
source "$(dirname "$0")/uv.sh"  # cd to the root; venv_uv
venv_uv
uv="$root/.venv/bin/uv"
export PREFECT_SERVER_ANALYTICS_ENABLED=false DO_NOT_TRACK=1
export HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}"

fail() {
  echo "infra/lowest.sh ($1): FAILED: $2" >&2
  exit 1
}

one() {
  local name="$1"
  shift
  local venv=".venv-lowest-$name"
  echo "== lowest ($name): resolve"
  if [ ! -x "$venv/bin/python" ]; then
    "$uv" venv --quiet --allow-existing --python "$python" "$venv" \
      || fail "$name" "making the venv"
  fi
  "$python" infra/lowest.py requirements "$name" "$venv/requirements.in" \
    || fail "$name" "reading pyproject.toml"
  "$python" infra/lowest.py pins "$name" "$venv/floors.txt" || fail "$name" "reading pyproject.toml"
  # For the venv's own Python: the floors must install where they run.
  "$uv" pip compile "$venv/requirements.in" --resolution lowest-direct \
    --constraints "$venv/floors.txt" --python "$venv/bin/python" \
    --no-header --quiet --output-file "$venv/requirements.txt" \
    || fail "$name" "no set of versions satisfies the floors"
  echo "resolved: $(grep -c '==' "$venv/requirements.txt") packages:" \
    "$(grep '==' "$venv/requirements.txt" | paste -sd ' ')"
  echo "== lowest ($name): install into $venv"
  "$uv" pip sync --quiet --compile-bytecode --python "$venv/bin/python" "$venv/requirements.txt" \
    || fail "$name" "installing the resolved versions"
  "$uv" pip install --quiet --no-deps --python "$venv/bin/python" -e . \
    || fail "$name" "installing the project"
  echo "== lowest ($name): floors"
  "$venv/bin/python" infra/lowest.py floors "$name" || fail "$name" "a floor was not installed"
  echo "== lowest ($name): imports"
  "$venv/bin/python" infra/lowest.py imports "$name" || fail "$name" "a module does not import"
  echo "== lowest ($name): tests"
  local tests
  case "$name" in
    core)
      tests=(tests/util/test_strictjson.py tests/grade/test_document.py tests/grade/test_ctrf.py
        tests/publishing/test_publish_local.py tests/publishing/test_publish_s3.py
        tests/publishing/test_publish_s3_faults.py tests/publishing/test_publish_s3_client.py
        tests/plugin/test_plugin.py tests/criteria/test_criteria.py
        tests/criteria/test_criteria_hostile.py tests/criteria/test_criteria_trajectory.py
        -k "not old_botocore")
      ;;
    prefect)
      tests=(tests/prefect/test_prefect_tasks.py tests/prefect/test_prefect_flow.py
        tests/grading/test_grading_s3.py tests/grading/test_shards.py
        tests/prefect/test_prefect_blocks.py)
      ;;
  esac
  # A test that hangs (a Dask worker that cannot load a task waits forever)
  # fails after --timeout instead of holding CI.
  "$venv/bin/python" -m pytest -n 2 --maxschedchunk 1 -q -p no:cacheprovider --timeout 300 \
    "${tests[@]}" "$@" || fail "$name" "tests"
}

case "${1:-}" in
  core | prefect)
    name="$1"
    shift
    one "$name" "$@"
    ;;
  "")
    one core
    one prefect
    ;;
  *)
    echo "usage: bash infra/lowest.sh [core|prefect [pytest arguments]]" >&2
    exit 2
    ;;
esac
