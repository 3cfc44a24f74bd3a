#!/usr/bin/env bash
# Makes sure Debian's chromium is at /usr/bin/chromium for the browser tests (test/browser/).
# Installs it with apt-get when it is missing, which needs root (or passwordless sudo), as
# scripts/test-services.sh does for PostgreSQL. Quiet when there is nothing to do; exits non-zero with a
# message on standard error when it cannot install. CHROMIUM_PATH names another binary to require.
set -euo pipefail
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$CHROMIUM" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  SUDO=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  SUDO=(sudo -n)
else
  echo "ensure-chromium: $CHROMIUM is missing and installing it needs root or passwordless sudo" >&2
  echo "ensure-chromium: run as root: apt-get update && apt-get install -y chromium" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: $CHROMIUM is missing and there is no apt-get to install Debian's chromium" >&2
  exit 1
fi

echo "ensure-chromium: installing Debian's chromium (once)" >&2
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! "${SUDO[@]}" apt-get update -qq >"$log" 2>&1 ||
  ! "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    chromium fonts-dejavu-core >>"$log" 2>&1; then
  cat "$log" >&2
  echo "ensure-chromium: apt-get could not install chromium" >&2
  exit 1
fi
if [ ! -x "$CHROMIUM" ]; then
  echo "ensure-chromium: apt-get finished but $CHROMIUM is still missing" >&2
  exit 1
fi
