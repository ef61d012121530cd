#!/usr/bin/env bash
# Install Debian's chromium and chromium-driver, and a font (a page without
# one renders no text), when the browser or its driver is missing. The
# headless browser test of `truereward sweep report` drives the one with the
# other; Debian builds both from one source, so their versions always match.
# Needs apt-get and root; without them it says what to install and exits 1
# (the browser test then fails loudly: it is never skipped).
set -euo pipefail
if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
  echo "infra/chromium.sh: /usr/bin/chromium and /usr/bin/chromedriver are needed:" \
    "install Debian's chromium and chromium-driver (apt-get, as root)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium chromium-driver fonts-dejavu-core >/dev/null
/usr/bin/chromium --version
