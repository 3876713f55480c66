#!/usr/bin/env bash
# Makes sure headless Chromium is present for the dashboard's browser tests
# (internal/dashboard/browser_test.go, docs/dashboard.md). When `chromium`
# is missing and this runs as root on a system with apt-get, it installs
# Debian's `chromium` package; otherwise it says why it did nothing and
# exits 0, so the caller decides whether a missing browser is an error
# (scripts/test.sh requires the browser tests only when Chromium is here).
set -uo pipefail
if command -v chromium >/dev/null 2>&1; then
  echo "browser.sh: chromium found at $(command -v chromium)"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "browser.sh: chromium is missing and not running as root; browser tests will be skipped"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "browser.sh: chromium is missing and apt-get is not available; browser tests will be skipped"
  exit 0
fi
echo "browser.sh: chromium is missing; running apt-get update"
if ! DEBIAN_FRONTEND=noninteractive apt-get update; then
  echo "browser.sh: apt-get update failed; browser tests will be skipped"
  exit 0
fi
echo "browser.sh: running apt-get install -y chromium"
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; then
  echo "browser.sh: apt-get install chromium failed; browser tests will be skipped"
  exit 0
fi
echo "browser.sh: installed chromium at $(command -v chromium)"
