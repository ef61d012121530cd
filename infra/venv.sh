# Sourced by the other scripts: make ./.venv (Python 3.11+) and install the
# project into it with the extras named in TRUEREWARD_EXTRAS.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "truereward needs Python 3.11 or newer (tried: $python; set PYTHON=...)" >&2
  exit 2
fi
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
fi
# Nothing to do when the venv already holds this clone, current, with every
# requirement of the extras (infra/venv_current.py says how that is decided).
if ! .venv/bin/python infra/venv_current.py "$root" "${TRUEREWARD_EXTRAS:-}"; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${TRUEREWARD_EXTRAS:+[$TRUEREWARD_EXTRAS]}"
fi
