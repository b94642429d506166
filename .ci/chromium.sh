#!/usr/bin/env bash
# Debian's Chromium for the browser tests (tests/ui), which drive it through playwright's
# Python package: playwright's own browser download cannot be used here. Installs Chromium
# (and a font for its screenshots) from Debian's packages when missing; prints its path.
#
#   .ci/chromium.sh          install when missing, print the browser's path on stdout
set -euo pipefail

browser=/usr/bin/chromium

log() { echo "chromium.sh: $*" >&2; }

if [[ ! -x $browser ]]; then
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    log "Chromium is not installed: installing it from Debian's packages"
    # the package lists of a fresh machine may be missing or stale: update first
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        chromium fonts-liberation >&2
fi
log "$("$browser" --version 2>/dev/null)"
echo "$browser"
