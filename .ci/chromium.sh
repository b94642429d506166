#!/usr/bin/env bash
# Debian's Chromium for the browser tests (tests/ui), which drive it through playwright's
# Python package: playwright's own browser download cannot be used here. Installs Chromium
# (and a font for its screenshots) from Debian's packages when missing; prints its path.
#
#   .ci/chromium.sh          install when missing, print the browser's path on stdout
set -euo pipefail

browser=/usr/bin/chromium

log() { echo "chromium.sh: $*" >&2; }

# shellcheck source=.ci/debian.sh
source "$(dirname "$0")/debian.sh"

if [[ ! -x $browser ]]; then
    log "Chromium is not installed: installing it from Debian's packages"
    apt_install chromium fonts-liberation
fi
log "$("$browser" --version 2>/dev/null)"
echo "$browser"
