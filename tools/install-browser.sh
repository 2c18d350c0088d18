#!/usr/bin/env bash
# Debian's Chromium for the browser tests (tests/test_calculator_parity.py). Playwright's Python
# package comes from the `test` extra and drives this binary; `playwright install` is never run.
# Idempotent; needs root for apt-get (CI runs as root).
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-browser: chromium is missing and this is not root; run: sudo apt-get install chromium" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
chromium --version
