# Sourced by the other scripts: make ./.venv (Python 3.11+) and install the
# project into it, editable, with the extras named in TRUEREWARD_EXTRAS, every
# package at the exact version infra/lock.txt pins (docs/install.md; refresh
# the lock with `bash infra/lock.sh`). uv installs it; TRUEREWARD_INSTALLER=pip
# installs the same pins with pip instead (also taken when uv cannot be had).
source "$(dirname "${BASH_SOURCE[0]}")/uv.sh"
# Nothing to do when the venv already holds this clone, current, with every
# requirement of the extras at its locked version (infra/venv_current.py says
# how that is decided).
if ! .venv/bin/python infra/venv_current.py "$root" "${TRUEREWARD_EXTRAS:-}"; then
  # The lock constrains; the extras choose: infra/demo.sh installs the
  # prefect extra's part of the lock, infra/test.sh the dev extra's. pip
  # itself comes at its locked version too (the tests run it). Every package
  # having one allowed version, no resolver backtracks.
  project=".${TRUEREWARD_EXTRAS:+[$TRUEREWARD_EXTRAS]}"
  if [ "${TRUEREWARD_INSTALLER:-uv}" = uv ] && venv_uv; then
    # Bytecode compiled at install (in parallel, about 17 s): with
    # PYTHONDONTWRITEBYTECODE=1 in the environment (the machines we test on set
    # it) Python never writes it, and every process of the suite (a Prefect
    # worker, server, CLI call) compiled every module it imported: `prefect
    # version` took 4.2 s in such a venv, 2.1 s in a compiled one.
    .venv/bin/uv pip install --quiet --compile-bytecode --python .venv/bin/python \
      --constraints infra/lock.txt --build-constraints infra/lock.txt \
      "pip==$(locked pip)" "uv==$(locked uv)" -e "$project"
  else
    uv_in_venv="$( [ -x .venv/bin/uv ] && echo 1 || true)"
    # PIP_CONSTRAINT (not -c) so that the build of the project, in its own
    # environment, gets the locked hatchling too. No bytecode up front (pip
    # compiles one file at a time, which doubled its install): Python writes
    # it as modules are first imported, unless PYTHONDONTWRITEBYTECODE is set.
    # A uv already in the venv is brought to its locked version as well.
    PIP_CONSTRAINT="$root/infra/lock.txt" .venv/bin/python -m pip install --quiet \
      --disable-pip-version-check --no-compile "pip==$(locked pip)" \
      ${uv_in_venv:+"uv==$(locked uv)"} -e "$project"
  fi
fi
# The project is installed editable, so no installer compiles its own modules,
# and with PYTHONDONTWRITEBYTECODE=1 Python never writes their bytecode: every
# process (a flow run, a worker, a CLI call in the tests) would compile each
# module it imports. Compiled here instead; files already current are skipped.
.venv/bin/python -m compileall -q -j 0 truereward flows >/dev/null
