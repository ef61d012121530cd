# Sourced by infra/venv.sh and infra/lock.sh: make ./.venv (Python 3.11+)
# when there is none, and define venv_uv, which puts into it the uv that
# infra/lock.txt pins. uv is one PyPI wheel without dependencies, so
# whichever pip the venv has (the stock one of `python3 -m venv` too) only
# downloads that file: its resolver has nothing to resolve.
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
fi

# The version infra/lock.txt pins for a package (its first pin: uv and pip
# have one line each).
locked() {
  sed -n "s/^$1==\([^ ;]*\).*\$/\1/p" infra/lock.txt | head -n 1
}

venv_uv() {
  local want
  want="$(locked uv)"
  if [ -z "$want" ]; then
    echo "infra/lock.txt pins no uv" >&2
    return 1
  fi
  if [ "$(.venv/bin/uv --version 2>/dev/null | cut -d ' ' -f 2)" = "$want" ]; then
    return 0
  fi
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps "uv==$want"
}
