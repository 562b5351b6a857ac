#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed at /usr/bin/chromium, for the browser test of the
# Temporal Web UI (test/integration/temporal-ui.test.ts). Idempotent: does nothing when it is
# already there. Installing needs root and the distribution's package mirror; nothing else is
# downloaded (playwright-core drives this system Chromium, it never fetches a browser of its own).
set -euo pipefail

CHROMIUM=/usr/bin/chromium

if [[ -x "$CHROMIUM" ]]; then
  exit 0
fi

fail() {
  echo "ensure-chromium: $*" >&2
  echo "ensure-chromium: install it by hand with: apt-get update && apt-get install -y --no-install-recommends chromium" >&2
  exit 1
}

if [[ "$(id -u)" -ne 0 ]]; then
  fail "$CHROMIUM is missing and installing it needs root (running as $(id -un))"
fi
command -v apt-get >/dev/null 2>&1 || fail "$CHROMIUM is missing and there is no apt-get to install it with"

echo "ensure-chromium: $CHROMIUM is missing; installing Debian's chromium package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update >&2 || fail "apt-get update failed"
apt-get install -y --no-install-recommends chromium >&2 || fail "apt-get install chromium failed"
[[ -x "$CHROMIUM" ]] || fail "the chromium package installed, but $CHROMIUM is still missing"
echo "ensure-chromium: installed $("$CHROMIUM" --version 2>/dev/null || echo chromium)" >&2
