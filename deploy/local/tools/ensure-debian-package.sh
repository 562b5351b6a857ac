#!/usr/bin/env bash
# Makes sure a Debian package the tests or benchmarks need is installed, by a file it provides:
#   ensure-debian-package.sh PACKAGE FILE
# e.g. chromium /usr/bin/chromium for the browser test of the Temporal Web UI, or libjemalloc2 for
# the benchmarks, which run the operator with the allocator its image preloads. Idempotent: does
# nothing when FILE is there. Installing needs root and the distribution's package mirror; nothing
# else is downloaded.
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 PACKAGE FILE" >&2
  exit 2
fi
PACKAGE=$1
FILE=$2

if [[ -e "$FILE" ]]; then
  exit 0
fi

fail() {
  echo "ensure-debian-package: $*" >&2
  echo "ensure-debian-package: install it by hand with: apt-get update && apt-get install -y --no-install-recommends $PACKAGE" >&2
  exit 1
}

if [[ "$(id -u)" -ne 0 ]]; then
  fail "$FILE is missing and installing $PACKAGE needs root (running as $(id -un))"
fi
command -v apt-get >/dev/null 2>&1 || fail "$FILE is missing and there is no apt-get to install $PACKAGE with"

echo "ensure-debian-package: $FILE is missing; installing Debian's $PACKAGE package" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update >&2 || fail "apt-get update failed"
apt-get install -y --no-install-recommends "$PACKAGE" >&2 || fail "apt-get install $PACKAGE failed"
[[ -e "$FILE" ]] || fail "the $PACKAGE package installed, but $FILE is still missing"
echo "ensure-debian-package: installed $PACKAGE" >&2
